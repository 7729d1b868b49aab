import Foundation
import HTTPTypes
import Hummingbird
import KizunaCore
import Logging

/// The website side of accounts: sign-in, sign-up, change-password and reset pages posting plain forms, the
/// `/.well-known/change-password` redirect, and the web-view handoff that turns an app's one-time code into a cookie.
///
/// Every page speaks the reader's language (``WebText``, chosen from `Accept-Language`), and the validation
/// messages on it are asked for in that same language.
struct WebController: Sendable {
    let accounts: AccountService
    let web: WebSettings
    let sessions: SessionPolicy

    private struct SignInForm: Decodable {
        var identifier: String
        var password: String
        var next: String?
    }

    private struct ChangePasswordForm: Decodable {
        var currentPassword: String
        var newPassword: String
    }

    private struct ResetForm: Decodable {
        var token: String
        var newPassword: String
    }

    func addRoutes(to root: RouterGroup<KizunaRequestContext>) {
        root.get("/.well-known/change-password", use: changePasswordRedirect)
        root.get("/account", use: accountPage)
        root.get("/account/sign-in", use: signInPage)
        root.post("/account/sign-in", use: signIn)
        root.get("/account/sign-up", use: signUpPage)
        root.post("/account/sign-up", use: signUp)
        root.post("/account/sign-out", use: signOut)
        root.get("/account/change-password", use: changePasswordPage)
        root.post("/account/change-password", use: changePassword)
        root.get("/account/reset-password", use: resetPasswordPage)
        root.post("/account/reset-password", use: resetPassword)
        root.get("/v1/session/handoff", use: redeemHandoff)
    }

    // MARK: Pages

    /// Where password managers send people to change a password (`/.well-known/change-password`).
    @Sendable func changePasswordRedirect(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        Response(status: .found, headers: [.location: "/account/change-password", .contentLength: "0"])
    }

    @Sendable func accountPage(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        guard let session = await currentSession(request) else { return Self.redirect("/account/sign-in") }
        return Self.html(WebPages.account(WebText(languages: request.languages), identifier: session.account.identifier))
    }

    @Sendable func signInPage(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        if await currentSession(request) != nil { return Self.redirect("/account") }
        let next = request.uri.queryParameters["next"].map(String.init).flatMap(Self.localPath)
        return Self.html(WebPages.signIn(WebText(languages: request.languages), next: next))
    }

    @Sendable func signUpPage(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        Self.html(WebPages.signUp(WebText(languages: request.languages)))
    }

    @Sendable func changePasswordPage(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        guard let session = await currentSession(request) else { return Self.redirect("/account/sign-in?next=/account/change-password") }
        return Self.html(WebPages.changePassword(WebText(languages: request.languages), identifier: session.account.identifier))
    }

    /// The reset form for the account the token resets (its username prefilled), or the expired-link page.
    @Sendable func resetPasswordPage(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let text = WebText(languages: request.languages)
        let token = request.uri.queryParameters["token"].map(String.init) ?? ""
        guard let account = try await accounts.resetAccount(token: token) else { return Self.expiredLink(text, AccountService.badResetToken) }
        return Self.html(WebPages.resetPassword(text, token: token, identifier: account.identifier))
    }

    // MARK: Forms

    /// Signs in and lands on `next` (or the account page); refusals show the form again with the reason.
    @Sendable func signIn(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        try checkOrigin(request)
        let form = try await request.form(SignInForm.self, context: context)
        let text = WebText(languages: request.languages)
        let next = form.next.flatMap(Self.localPath)
        do {
            let (_, session) = try await accounts.signIn(
                Credentials(identifier: form.identifier, password: form.password, trustToken: web.deviceToken(in: request)), kind: .web,
                address: request.clientAddress(context, trustForwardedFor: web.trustForwardedFor))
            return signedIn(session, redirect: next ?? "/account")
        } catch let error as KizunaError where [.invalidCredentials, .throttled, .accountDisabled, .unavailable].contains(error.code) {
            return Self.errorPage(
                WebPages.signIn(text, identifier: form.identifier, next: next, problems: [.init(message: text.message(for: error))]), error)
        }
    }

    @Sendable func signUp(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        try checkOrigin(request)
        let form = try await request.form(SignInForm.self, context: context)
        let text = WebText(languages: request.languages)
        do {
            let (_, session) = try await accounts.signUp(
                Credentials(identifier: form.identifier, password: form.password), kind: .web, languages: [text.language])
            return signedIn(session, redirect: "/account", status: .seeOther)
        } catch let error as KizunaError where [.validationFailed, .conflict, .unavailable].contains(error.code) {
            return Self.errorPage(WebPages.signUp(text, identifier: form.identifier, problems: Self.problems(error, text)), error)
        }
    }

    @Sendable func signOut(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        try checkOrigin(request)
        if let session = await currentSession(request) {
            try await accounts.signOut(session: session.sessionId, of: session.account.id)
        }
        var response = Self.redirect("/account/sign-in")
        response.setCookie(web.clearedSessionCookie)
        return response
    }

    @Sendable func changePassword(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        try checkOrigin(request)
        guard let session = await currentSession(request) else { return Self.redirect("/account/sign-in?next=/account/change-password") }
        let form = try await request.form(ChangePasswordForm.self, context: context)
        let text = WebText(languages: request.languages)
        let identifier = session.account.identifier
        do {
            try await accounts.changePassword(
                session, ChangePasswordRequest(currentPassword: form.currentPassword, newPassword: form.newPassword), languages: [text.language])
            return Self.html(WebPages.changePassword(text, identifier: identifier, done: true))
        } catch let error as KizunaError where [.validationFailed, .invalidCredentials, .throttled, .unavailable].contains(error.code) {
            return Self.errorPage(WebPages.changePassword(text, identifier: identifier, problems: Self.problems(error, text)), error)
        }
    }

    @Sendable func resetPassword(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        try checkOrigin(request)
        let form = try await request.form(ResetForm.self, context: context)
        let text = WebText(languages: request.languages)
        do {
            try await accounts.resetPassword(ResetPasswordRequest(token: form.token, newPassword: form.newPassword), languages: [text.language])
            return Self.html(WebPages.passwordWasReset(text))
        } catch let error as KizunaError where [.validationFailed, .sessionExpired, .unavailable].contains(error.code) {
            // The form again, for the account the token still resets; once the token is spent, the expired-link page.
            guard error.code != .sessionExpired, let account = try await accounts.resetAccount(token: form.token) else {
                return Self.expiredLink(text, error.code == .sessionExpired ? error : AccountService.badResetToken)
            }
            let page = WebPages.resetPassword(text, token: form.token, identifier: account.identifier, problems: Self.problems(error, text))
            return Self.errorPage(page, error)
        }
    }

    /// Turns an app's one-time code into a cookie session and lands on the page it names.
    @Sendable func redeemHandoff(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        do {
            let (session, next) = try await accounts.redeemHandoff(request.uri.queryParameters["code"].map(String.init) ?? "")
            return signedIn(session, redirect: next)
        } catch let error as KizunaError where error.code == .sessionExpired {
            let text = WebText(languages: request.languages)
            return Self.html(WebPages.message(text, title: text.linkExpiredTitle, error: error), status: .badRequest)
        }
    }

    // MARK: Helpers

    /// The cookie session the request carries, if it is valid.
    private func currentSession(_ request: Request) async -> AuthenticatedSession? {
        guard let token = web.sessionToken(in: request) else { return nil }
        return try? await accounts.authenticate(token)
    }

    /// A redirect that also sets the new session's cookie.
    private func signedIn(_ session: IssuedSession, redirect path: String, status: HTTPResponse.Status = .seeOther) -> Response {
        var response = Self.redirect(path, status: status)
        response.setCookie(web.sessionCookie(session.access.text, lifetime: sessions.webLifetime))
        if let trust = session.trust { response.setCookie(web.deviceCookie(trust.text)) }
        response.headers[.cacheControl] = "no-store"
        return response
    }

    private func checkOrigin(_ request: Request) throws {
        guard web.isSameOrigin(request) else { throw KizunaError(.forbidden, "Forms must be posted from this site's own pages.") }
    }

    /// The problems of a refusal, each validation problem prefixed with its field's label in the page's language.
    private static func problems(_ error: KizunaError, _ text: WebText) -> [WebPages.Problem] {
        guard !error.details.isEmpty else { return [.init(field: error.field, message: text.message(for: error))] }
        return error.details.map { detail in
            let field = detail.field
            let label = field.flatMap(text.label(of:))
            return .init(field: field, message: label.map { "\($0): \(detail.message)" } ?? detail.message)
        }
    }

    /// The page for a reset link that is unknown, used or expired, with the refusal's status.
    private static func expiredLink(_ text: WebText, _ error: KizunaError) -> Response {
        errorPage(WebPages.message(text, title: text.linkExpiredTitle, error: error), error)
    }

    private static func localPath(_ path: String) -> String? {
        WebSettings.isLocalPath(path) ? path : nil
    }

    static func redirect(_ path: String, status: HTTPResponse.Status = .seeOther) -> Response {
        Response(status: status, headers: [.location: path, .contentLength: "0", .cacheControl: "no-store"])
    }

    /// The page showing `error`, with its status and, for throttling and overload, `Retry-After`.
    static func errorPage(_ text: String, _ error: KizunaError) -> Response {
        var response = html(text, status: ErrorResponder.status(for: error.code))
        if let retryAfter = error.retryAfter { response.headers[.retryAfter] = String(retryAfter) }
        return response
    }

    static func html(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        .bytes(
            Array(text.utf8), contentType: "text/html; charset=utf-8", status: status,
            headers: [
                .cacheControl: "no-store",
                .contentSecurityPolicy: "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'",
                .xContentTypeOptions: "nosniff",
            ])
    }
}
