import Foundation
import HTTPTypes
import Hummingbird
import KizunaCore
import Logging

/// The admin console at `/console`: pages for operating Kizuna from a browser, served by the binary itself.
///
/// **Signing in.** An operator signs in once with an admin token; the browser then holds only a console session in a
/// cookie (`__Host-kizuna_console`: `Secure`, `HttpOnly`, `SameSite=Strict`, `Path=/`; on plain HTTP over loopback,
/// during development, `kizuna_console` without `Secure`, as the account pages do), never the token. The session
/// ends at sign-out, after ``SessionPolicy/consoleLifetime``, after ``SessionPolicy/consoleIdleLimit`` unused, or when
/// its admin token is revoked.
///
/// **Every change** is a form posted with the session's CSRF token (``ConsoleCredential/csrfToken``), from this site's
/// own origin (`Origin`, else `Sec-Fetch-Site`), and goes through the admin API's own route (``AdminAPI``): the same
/// validation and store path as the CLI. Pages forbid framing and load nothing from elsewhere
/// (`Content-Security-Policy: default-src 'self'; frame-ancestors 'none'`).
struct ConsoleController: Sendable {
    let api: AdminAPI
    let tokens: any AdminTokenRepository
    let sessions: ConsoleSessionStore
    let web: WebSettings
    /// Whether the store is ready: until it is, only the Health page answers (with the migration's progress).
    let readiness: Readiness
    /// Failed sign-ins per client address, in the store the account sign-ins count in (every instance sees them).
    let throttle: SignInThrottle

    func addRoutes(to root: RouterGroup<KizunaRequestContext>) {
        root.get("/console", use: home)
        root.get("/console/console.css", use: stylesheet)
        root.get("/console/language", use: chooseLanguage)
        root.get("/console/sign-in", use: signInPage)
        root.post("/console/sign-in", use: signIn)
        root.post("/console/sign-out", use: signedIn(signOut))
        addAppRoutes(to: root)
        addDocumentRoutes(to: root)
        addSimulatorRoutes(to: root)
        addDomainRoutes(to: root)
        addUserRoutes(to: root)
        addHealthRoutes(to: root)
        addReleaseRoutes(to: root)
        addDataRoutes(to: root)
        addAPIKeyRoutes(to: root)
        addPushRoutes(to: root)
        addDocumentFormRoutes(to: root)
    }

    // MARK: Signing in and out

    @Sendable func home(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        Self.redirect(try await session(request) == nil ? "/console/sign-in" : ConsolePages.Section.apps.path)
    }

    @Sendable func signInPage(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        if try await session(request) != nil { return Self.redirect("/console") }
        let text = Self.text(request)
        let notice =
            request.uri.queryParameters["ended"] != nil ? text[.sessionEnded] : request.uri.queryParameters["out"] != nil ? text[.signedOut] : nil
        return Self.html(ConsolePages.signIn(text, notice: notice))
    }

    private struct SignInForm: Decodable {
        var token: String
    }

    /// Checks the token, opens a session and sets its cookie. The token itself is never echoed back into the page.
    @Sendable func signIn(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let text = Self.text(request)
        guard web.isSameOrigin(request) else { return Self.refusal(text, text[.badOrigin]) }
        let form = try await request.form(SignInForm.self, context: context)
        // Tokens are too long to guess; the limit keeps a guessing run from filling the log and the store's time.
        let keys = request.clientAddress(context, trustForwardedFor: web.trustForwardedFor).map { [throttle.consoleKey($0)] } ?? []
        if let locked = try await signInLock(keys) {
            context.logger.notice("Console sign-in refused: too many failures from this address")
            var response = Self.html(
                ConsolePages.signIn(text, problems: [.init(field: "token", message: text[.signInLocked])]), status: .tooManyRequests)
            response.headers[.retryAfter] = "\(locked)"
            return response
        }
        guard let credential = AdminCredential(form.token.trimmingCharacters(in: .whitespacesAndNewlines)),
            let token = try await tokens.authenticate(credential)
        else {
            try await throttle.recordFailure(keys)
            context.logger.notice("Console sign-in refused: not a valid admin token")
            let page = ConsolePages.signIn(text, problems: [.init(field: "token", message: text[.badToken])])
            return Self.html(page, status: .unauthorized)
        }
        let session = try await sessions.open(as: token)
        context.logger.notice("Console session opened", metadata: ["admin.token": "\(token.id)"])
        var response = Self.redirect("/console")
        response.setCookie(sessionCookie(session.text, maxAge: Int(sessions.lifetime.components.seconds)))
        return response
    }

    /// The seconds until `keys` may try again, or nil when none is locked.
    private func signInLock(_ keys: [SignInThrottle.Key]) async throws -> Int? {
        do {
            try await throttle.check(keys)
            return nil
        } catch let error as KizunaError where error.code == .throttled {
            return error.retryAfter ?? 1
        }
    }

    @Sendable func signOut(_ request: Request, context: KizunaRequestContext, session: ConsoleSession) async throws -> Response {
        let form = try await request.form(CSRFForm.self, context: context)
        if let refusal = refusal(request, context, session, csrf: form.csrf) { return refusal }
        try await sessions.close(session)
        var response = Self.redirect("/console/sign-in?out=1")
        response.setCookie(sessionCookie("", maxAge: 0))
        return response
    }

    /// Remembers a language chosen with the switch, then goes back to the page it was chosen on.
    @Sendable func chooseLanguage(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let chosen = request.uri.queryParameters["to"].map(String.init) ?? ""
        let back = request.uri.queryParameters["back"].map(String.init).flatMap { path in
            WebSettings.isLocalPath(path) && path.hasPrefix("/console") ? path : nil
        }
        var response = Self.redirect(back ?? "/console")
        if ConsoleText.languages.contains(where: { $0.code == chosen }) {
            response.setCookie(
                Cookie(
                    name: Self.languageCookie, value: chosen, maxAge: 365 * 86_400, path: "/console", secure: web.cookieMode == .secure,
                    httpOnly: true, sameSite: .lax))
        }
        return response
    }

    @Sendable func stylesheet(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        .bytes(Array(ConsoleStyle.css.utf8), contentType: "text/css; charset=utf-8", headers: [.cacheControl: "no-cache"])
    }

    // MARK: Sessions and forms

    /// `handler` for a signed-in operator: a request without a live session is sent to sign in instead (told that its
    /// session ended, when the browser had one).
    func signedIn(
        _ handler: @escaping @Sendable (Request, KizunaRequestContext, ConsoleSession) async throws -> Response
    ) -> @Sendable (Request, KizunaRequestContext) async throws -> Response {
        { request, context in
            if let session = try await session(request) { return try await handler(request, context, session) }
            let hadOne = request.cookies[cookieName].map { !$0.value.isEmpty } ?? false
            var response = Self.redirect(hadOne ? "/console/sign-in?ended=1" : "/console/sign-in")
            if hadOne { response.setCookie(sessionCookie("", maxAge: 0)) }
            return response
        }
    }

    /// The session the request's cookie opens, if it is live. A store that cannot be reached is an error (503), not a
    /// session that ended: answering "signed out" would clear the cookie of every operator during an outage.
    func session(_ request: Request) async throws -> ConsoleSession? {
        guard let value = request.cookies[cookieName]?.value, let credential = ConsoleCredential(value) else { return nil }
        return try await sessions.authenticate(credential)
    }

    /// The answer to a form that must not be acted on — posted from another origin, or without the session's CSRF
    /// token (`csrf`, the form's field of that name) — or nil when it may.
    func refusal(_ request: Request, _ context: KizunaRequestContext, _ session: ConsoleSession, csrf: String?) -> Response? {
        let text = Self.text(request)
        guard web.isSameOrigin(request) else { return Self.refusal(text, text[.badOrigin]) }
        guard session.credential.acceptsCSRF(csrf) else {
            context.logger.notice("Console form refused: CSRF token missing or wrong")
            return Self.refusal(text, text[.badCSRF])
        }
        return nil
    }

    private struct CSRFForm: Decodable {
        var csrf: String?
    }

    /// The layout's parts for `session` on `request`'s page.
    static func frame(_ request: Request, _ session: ConsoleSession, section: ConsolePages.Section?) -> ConsolePages.Frame {
        ConsolePages.Frame(text: text(request), csrf: session.credential.csrfToken, section: section, path: request.uri.path)
    }

    static func text(_ request: Request) -> ConsoleText {
        ConsoleText(chosen: request.cookies[languageCookie]?.value, preferred: request.languages)
    }

    static let languageCookie = "kizuna_console_lang"

    private var cookieName: String { web.cookieMode == .secure ? "__Host-kizuna_console" : "kizuna_console" }

    private func sessionCookie(_ value: String, maxAge: Int) -> Cookie {
        Cookie(name: cookieName, value: value, maxAge: maxAge, path: "/", secure: web.cookieMode == .secure, httpOnly: true, sameSite: .strict)
    }

    static func redirect(_ path: String) -> Response {
        WebController.redirect(path)
    }

    static func refusal(_ text: ConsoleText, _ message: String) -> Response {
        html(ConsolePages.refused(text, message: message), status: .forbidden)
    }

    /// A console page: never cached, never framed, nothing loaded from elsewhere, no referrer sent off-site.
    static func html(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        .bytes(
            Array(text.utf8), contentType: "text/html; charset=utf-8", status: status,
            headers: [
                .cacheControl: "no-store",
                .contentSecurityPolicy: "default-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
                .xContentTypeOptions: "nosniff",
                .referrerPolicy: "same-origin",
            ])
    }
}
