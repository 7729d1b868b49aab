import Foundation
import HTTPTypes
import Hummingbird
import KizunaCore
import Logging

/// The accounts API for apps (JSON, bearer tokens): `/v1/auth/…` to get a session, `/v1/me/…` with one.
struct AccountsController: Sendable {
    let accounts: AccountService
    let web: WebSettings

    func addRoutes(to v1: RouterGroup<KizunaRequestContext>) {
        let auth = v1.group("/auth")
        auth.post("/sign-up", use: signUp)
        auth.post("/sign-in", use: signIn)
        auth.post("/refresh", use: refresh)
        auth.post("/reset-password", use: resetPassword)

        let session = SessionMiddleware(accounts: accounts, web: web)
        v1.group("/auth/sign-out").add(middleware: session).post(use: signOut)

        let me = v1.group("/me").add(middleware: session)
        me.get(use: currentAccount)
        me.delete(use: deleteAccount)
        me.get("/sessions", use: listSessions)
        me.delete("/sessions/{session}", use: endSession)
        me.post("/password", use: changePassword)
        me.post("/handoff", use: createHandoff)
    }

    /// Secrets must not be cached by anything between.
    static let noStore: HTTPFields = [.cacheControl: "no-store"]

    // MARK: Getting a session

    @Sendable func signUp(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let credentials = try await request.decode(as: Credentials.self, context: context)
        let (account, session) = try await accounts.signUp(credentials, kind: .app, languages: request.languages)
        return try .json(
            SessionGrant(account: account, session: session.tokens, trustToken: session.trust?.text), status: .created, headers: Self.noStore)
    }

    @Sendable func signIn(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let credentials = try await request.decode(as: Credentials.self, context: context)
        let address = request.clientAddress(context, trustForwardedFor: web.trustForwardedFor)
        let (account, session) = try await accounts.signIn(credentials, kind: .app, address: address)
        return try .json(SessionGrant(account: account, session: session.tokens, trustToken: session.trust?.text), headers: Self.noStore)
    }

    @Sendable func refresh(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let body = try await request.decode(as: RefreshRequest.self, context: context)
        let (account, session) = try await accounts.refresh(body)
        return try .json(SessionGrant(account: account, session: session.tokens), headers: Self.noStore)
    }

    @Sendable func resetPassword(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        try await accounts.resetPassword(try await request.decode(as: ResetPasswordRequest.self, context: context), languages: request.languages)
        return .empty()
    }

    // MARK: With a session

    /// Signs out the current session, or with `everywhere` every session of the account.
    @Sendable func signOut(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let current = try context.requireSession()
        let body = try await request.decodeIfPresent(as: SignOutRequest.self, context: context, default: SignOutRequest())
        if body.everywhere {
            try await accounts.signOutEverywhere(current.account.id)
        } else {
            try await accounts.signOut(session: current.sessionId, of: current.account.id)
        }
        var response = Response.empty()
        if current.kind == .web { response.setCookie(web.clearedSessionCookie) }
        return response
    }

    @Sendable func currentAccount(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        try .json(try context.requireSession().account, headers: Self.noStore)
    }

    @Sendable func deleteAccount(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let current = try context.requireSession()
        let body = try await request.decode(as: DeleteAccountRequest.self, context: context)
        try await accounts.deleteAccount(current, password: body.password)
        var response = Response.empty()
        if current.kind == .web { response.setCookie(web.clearedSessionCookie) }
        return response
    }

    @Sendable func listSessions(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let current = try context.requireSession()
        return try .json(
            SessionList(sessions: try await accounts.sessions(of: current.account.id, current: current.sessionId)), headers: Self.noStore)
    }

    /// Signs out one session of the account, named in the path.
    @Sendable func endSession(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let current = try context.requireSession()
        try await accounts.signOut(session: try context.parameters.path("session"), of: current.account.id)
        return .empty()
    }

    @Sendable func changePassword(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let current = try context.requireSession()
        let change = try await request.decode(as: ChangePasswordRequest.self, context: context)
        try await accounts.changePassword(current, change, languages: request.languages)
        return .empty()
    }

    /// A one-time code (and link) that opens the account website in a web view, signed in as this account.
    @Sendable func createHandoff(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let current = try context.requireSession()
        let body = try await request.decodeIfPresent(as: HandoffRequest.self, context: context, default: HandoffRequest())
        let next = body.next ?? "/account"
        guard WebSettings.isLocalPath(next) else {
            throw KizunaError(.validationFailed, "next must be a path on this site, such as /account.", field: "next")
        }
        let (code, expires) = try await accounts.createHandoff(current, next: next)
        let url = web.link("/v1/session/handoff?code=\(code.text)")
        return try .json(HandoffCode(code: code.text, expiresAt: EpochMillis.date(expires), url: url), status: .created, headers: Self.noStore)
    }
}
