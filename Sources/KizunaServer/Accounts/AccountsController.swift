import Foundation
import HTTPTypes
import Hummingbird
import KizunaCore
import Logging

/// The accounts API for apps (JSON, bearer tokens): `/v1/auth/…` to get a session, `/v1/me/…` with one.
struct AccountsController {
    let accounts: AccountService
    let web: WebSettings

    func addRoutes(to v1: RouteBuilder) {
        let auth = v1.group("/auth")
        auth.post("/sign-up") { request, context in
            let credentials = try await request.decode(as: Credentials.self, context: context)
            let (account, session) = try await accounts.signUp(credentials, kind: .app, languages: request.languages)
            return try .json(
                SessionGrant(account: account, session: session.tokens, trustToken: session.trust?.text), status: .created, headers: Self.noStore)
        }
        auth.post("/sign-in") { request, context in
            let credentials = try await request.decode(as: Credentials.self, context: context)
            let address = request.clientAddress(context, trustForwardedFor: web.trustForwardedFor)
            let (account, session) = try await accounts.signIn(credentials, kind: .app, address: address)
            return try .json(SessionGrant(account: account, session: session.tokens, trustToken: session.trust?.text), headers: Self.noStore)
        }
        auth.post("/refresh") { request, context in
            let body = try await request.decode(as: RefreshRequest.self, context: context)
            let (account, session) = try await accounts.refresh(body)
            return try .json(SessionGrant(account: account, session: session.tokens), headers: Self.noStore)
        }
        auth.post("/reset-password") { request, context in
            try await accounts.resetPassword(try await request.decode(as: ResetPasswordRequest.self, context: context), languages: request.languages)
            return .empty()
        }

        let session = SessionMiddleware(accounts: accounts, web: web)
        v1.group("/auth/sign-out", middleware: session).post { request, context in
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

        let me = v1.group("/me", middleware: session)
        me.get { _, context in
            try .json(try context.requireSession().account, headers: Self.noStore)
        }
        me.delete { request, context in
            let current = try context.requireSession()
            let body = try await request.decode(as: DeleteAccountRequest.self, context: context)
            try await accounts.deleteAccount(current, password: body.password)
            var response = Response.empty()
            if current.kind == .web { response.setCookie(web.clearedSessionCookie) }
            return response
        }
        me.get("/sessions") { _, context in
            let current = try context.requireSession()
            return try .json(
                SessionList(sessions: try await accounts.sessions(of: current.account.id, current: current.sessionId)), headers: Self.noStore)
        }
        me.delete("/sessions/{session}") { _, context in
            let current = try context.requireSession()
            try await accounts.signOut(session: try context.parameters.path("session"), of: current.account.id)
            return .empty()
        }
        me.post("/password") { request, context in
            let current = try context.requireSession()
            let change = try await request.decode(as: ChangePasswordRequest.self, context: context)
            try await accounts.changePassword(current, change, languages: request.languages)
            return .empty()
        }
        me.post("/handoff") { request, context in
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

    /// Secrets must not be cached by anything between.
    static let noStore: HTTPFields = [.cacheControl: "no-store"]
}

/// Accounts for operators: `/v1/admin/users`.
struct UsersController {
    let accounts: AccountService
    let web: WebSettings

    func addRoutes(to admin: RouteBuilder) {
        admin.get("/users") { request, _ in
            let query = request.uri.queryParameters
            let list = try await accounts.listUsers(
                after: query["after"].map(String.init), limit: try query.int("limit", default: 50, in: 1...500),
                search: query["search"].map(String.init))
            return try .json(list)
        }
        admin.get("/users/{user}") { _, context in
            try .json(try await find(context))
        }
        admin.patch("/users/{user}") { request, context in
            let user = try await find(context)
            let patch = try await request.decode(as: UserPatch.self, context: context)
            if let disabled = patch.disabled, disabled != user.disabled { try await accounts.setDisabled(disabled, userId: user.id) }
            return try .json(try await find(context))
        }
        admin.delete("/users/{user}") { _, context in
            try await accounts.delete(userId: try await find(context).id)
            return .empty()
        }
        admin.post("/users/{user}/password-reset") { _, context in
            let user = try await find(context)
            let (token, expires) = try await accounts.createResetToken(userId: user.id)
            let url = web.link("/account/reset-password?token=\(token.text)")
            return try .json(
                PasswordResetGrant(token: token.text, expiresAt: EpochMillis.date(expires), url: url), status: .created,
                headers: AccountsController.noStore)
        }
    }

    /// The account the path names, by id (`usr_…`) or identifier.
    private func find(_ context: KizunaRequestContext) async throws -> UserRecord {
        let reference = try context.parameters.path("user")
        guard let user = try await accounts.findUser(reference) else {
            throw KizunaError(.notFound, "There is no account '\(reference)'.", field: "user")
        }
        return user
    }
}
