import Foundation
import HTTPTypes
import Hummingbird
import KizunaCore
import Logging

/// Accounts for operators: `/v1/admin/users`.
struct UsersController: Sendable {
    let accounts: AccountService
    let groups: any UserGroupRepository
    let web: WebSettings

    func addRoutes(to admin: RouterGroup<KizunaRequestContext>) {
        admin.get("/users", use: listUsers)
        admin.get("/users/{user}", use: showUser)
        admin.patch("/users/{user}", use: updateUser)
        admin.delete("/users/{user}", use: deleteUser)
        admin.get("/users/{user}/sessions", use: listSessions)
        admin.delete("/users/{user}/sessions/{session}", use: endSession)
        admin.post("/users/{user}/password-reset", use: createPasswordReset)
        admin.get("/users/{user}/groups", use: listGroups)
        admin.put("/users/{user}/groups/{group}", use: addToGroup)
        admin.delete("/users/{user}/groups/{group}", use: removeFromGroup)
    }

    @Sendable func listUsers(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let query = request.uri.queryParameters
        let list = try await accounts.listUsers(
            after: query["after"].map(String.init), limit: try query.int("limit", default: 50, in: 1...500),
            search: query["search"].map(String.init))
        return try .json(list)
    }

    @Sendable func showUser(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        try .json(try await find(context))
    }

    /// Disables or enables the account (disabling signs out every session).
    @Sendable func updateUser(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let user = try await find(context)
        let patch = try await request.decode(as: UserPatch.self, context: context)
        if let disabled = patch.disabled, disabled != user.disabled { try await accounts.setDisabled(disabled, userId: user.id) }
        return try .json(try await find(context))
    }

    @Sendable func deleteUser(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        try await accounts.delete(userId: try await find(context).id)
        return .empty()
    }

    /// The account's sessions that have not expired, newest first: what the account's own `GET /v1/accounts/sessions`
    /// lists, for an operator answering "where am I signed in?".
    @Sendable func listSessions(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        try .json(
            SessionList(sessions: try await accounts.sessions(of: try await find(context).id, current: nil)), headers: AccountsController.noStore)
    }

    /// Signs one session out (a lost phone), at once: its tokens stop working and its realtime connections close.
    @Sendable func endSession(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        try await accounts.signOut(session: try context.parameters.path("session"), of: try await find(context).id)
        return .empty()
    }

    /// A single-use reset token (and link) for the operator to hand to the account's owner.
    @Sendable func createPasswordReset(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let user = try await find(context)
        let (token, expires) = try await accounts.createResetToken(userId: user.id)
        let url = web.link("/account/reset-password?token=\(token.text)")
        return try .json(
            PasswordResetGrant(token: token.text, expiresAt: EpochMillis.date(expires), url: url), status: .created,
            headers: AccountsController.noStore)
    }

    /// The groups the account is in, which `allow: groups` rules of the data API check.
    @Sendable func listGroups(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        try .json(UserGroups(groups: try await groups.groups(of: try await find(context).id)))
    }

    @Sendable func addToGroup(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let user = try await find(context)
        try await groups.add(user.id, to: try context.parameters.path("group"))
        return try .json(UserGroups(groups: try await groups.groups(of: user.id)))
    }

    @Sendable func removeFromGroup(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let user = try await find(context)
        try await groups.remove(user.id, from: try context.parameters.path("group"))
        return try .json(UserGroups(groups: try await groups.groups(of: user.id)))
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
