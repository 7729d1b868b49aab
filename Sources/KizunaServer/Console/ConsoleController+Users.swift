import Foundation
import HTTPTypes
import Hummingbird
import KizunaCore

/// The console's Users section: finding an account, its devices, sessions and groups, disabling and enabling it,
/// a password-reset link for its owner, and deleting it; each through the admin API's `/v1/admin/users` routes.
extension ConsoleController {
    func addUserRoutes(to root: RouterGroup<KizunaRequestContext>) {
        root.get("/console/users", use: signedIn(usersPage))
        root.get("/console/users/{user}", use: signedIn(userPage))
        root.post("/console/users/{user}/status", use: signedIn(setUserStatus))
        root.post("/console/users/{user}/sessions/{session}/end", use: signedIn(endUserSession))
        root.post("/console/users/{user}/password-reset", use: signedIn(createResetLink))
        root.post("/console/users/{user}/groups", use: signedIn(addUserGroup))
        root.post("/console/users/{user}/groups/remove", use: signedIn(removeUserGroup))
        root.get("/console/users/{user}/delete", use: signedIn(deleteUserPage))
        root.post("/console/users/{user}/delete", use: signedIn(deleteUser))
    }

    /// A user form's fields, as posted (each form uses some of them).
    private struct UserForm: Decodable {
        var csrf: String?
        var disabled: String?
        var group: String?
        var confirm: String?
    }

    /// One page of accounts in identifier order, those whose identifier contains `?search=`, from `?after=`.
    @Sendable func usersPage(_ request: Request, context: KizunaRequestContext, session: ConsoleSession) async throws -> Response {
        let search = (request.uri.queryParameters["search"].map(String.init) ?? "").trimmingCharacters(in: .whitespaces)
        let after = request.uri.queryParameters["after"].map(String.init)
        var query = [URLQueryItem(name: "limit", value: "50")]
        if !search.isEmpty { query.append(URLQueryItem(name: "search", value: search)) }
        if let after, !after.isEmpty { query.append(URLQueryItem(name: "after", value: after)) }
        let frame = Self.frame(request, session, section: .users)
        let answer = try await api.call(.get, "/v1/admin/users?\(Self.query(query))", as: session.token, context: context)
        if let error = answer.error {
            // A cursor that is not one of ours (edited by hand) is the admin API's 400: shown, with the search kept.
            let problems = ConsolePages.problems(error) { _ in nil }
            return Self.html(
                ConsoleUserPages.list(frame, page: UserList(users: [], next: nil), search: search, problems: problems), status: answer.status)
        }
        let page = try answer.decode(UserList.self)
        return Self.html(ConsoleUserPages.list(frame, page: page, search: search, notice: Self.notice(request, frame.text)))
    }

    @Sendable func userPage(_ request: Request, context: KizunaRequestContext, session: ConsoleSession) async throws -> Response {
        try await userPage(request, context, session, problems: [])
    }

    private func userPage(
        _ request: Request, _ context: KizunaRequestContext, _ session: ConsoleSession, problems: [ConsolePages.Problem],
        status: HTTPResponse.Status = .ok, typedGroup: String = ""
    ) async throws -> Response {
        guard let (user, groups) = try await findUser(context, session) else { return notFound(request, session, section: .users) }
        let sessions = try await api.call(.get, "\(Self.userPath(user.id))/sessions", as: session.token, context: context)
        if let error = sessions.error { throw error }
        let frame = Self.frame(request, session, section: .users)
        let page = ConsoleUserPages.detail(
            frame, user: user, sessions: try sessions.decode(SessionList.self).sessions, groups: groups, problems: problems, typedGroup: typedGroup,
            notice: Self.notice(request, frame.text))
        return Self.html(page, status: status)
    }

    /// Disables (every session signed out at once) or enables the account.
    @Sendable func setUserStatus(_ request: Request, context: KizunaRequestContext, session: ConsoleSession) async throws -> Response {
        let form = try await request.form(UserForm.self, context: context)
        if let refusal = refusal(request, context, session, csrf: form.csrf) { return refusal }
        let user = try context.parameters.require("user")
        let disabled = form.disabled == "true"
        let answer = try await api.call(.patch, Self.userPath(user), json: UserPatch(disabled: disabled), as: session.token, context: context)
        if answer.status == .notFound { return notFound(request, session, section: .users) }
        if let error = answer.error {
            return try await userPage(request, context, session, problems: Self.userProblems(error), status: answer.status)
        }
        return Self.redirect("\(Self.consoleUserPath(user))?notice=\(disabled ? "userDisabled" : "userEnabled")")
    }

    /// Signs one of the account's sessions out (a lost phone); one already gone is reported on the account's page.
    @Sendable func endUserSession(_ request: Request, context: KizunaRequestContext, session: ConsoleSession) async throws -> Response {
        let form = try await request.form(UserForm.self, context: context)
        if let refusal = refusal(request, context, session, csrf: form.csrf) { return refusal }
        let user = try context.parameters.require("user")
        let path = "\(Self.userPath(user))/sessions/\(Self.escapedSegment(try context.parameters.require("session")))"
        let answer = try await api.call(.delete, path, as: session.token, context: context)
        if let error = answer.error {
            // A 404 names the session when the account exists (signed out meanwhile, or expired), the account otherwise.
            if error.field != "session", answer.status == .notFound { return notFound(request, session, section: .users) }
            return try await userPage(request, context, session, problems: Self.userProblems(error), status: answer.status)
        }
        return Self.redirect("\(Self.consoleUserPath(user))?notice=userSessionEnded")
    }

    /// A single-use reset link, shown once on the answer to the form (never stored by the console, never cached).
    @Sendable func createResetLink(_ request: Request, context: KizunaRequestContext, session: ConsoleSession) async throws -> Response {
        let form = try await request.form(UserForm.self, context: context)
        if let refusal = refusal(request, context, session, csrf: form.csrf) { return refusal }
        let id = try context.parameters.require("user")
        let answer = try await api.call(.post, "\(Self.userPath(id))/password-reset", as: session.token, context: context)
        if answer.status == .notFound { return notFound(request, session, section: .users) }
        if let error = answer.error {
            return try await userPage(request, context, session, problems: Self.userProblems(error), status: answer.status)
        }
        let grant = try answer.decode(PasswordResetGrant.self)
        guard let (user, _) = try await findUser(context, session) else { return notFound(request, session, section: .users) }
        return Self.html(ConsoleUserPages.resetLink(Self.frame(request, session, section: .users), user: user, grant: grant))
    }

    @Sendable func addUserGroup(_ request: Request, context: KizunaRequestContext, session: ConsoleSession) async throws -> Response {
        try await changeGroup(request, context, session, adding: true)
    }

    @Sendable func removeUserGroup(_ request: Request, context: KizunaRequestContext, session: ConsoleSession) async throws -> Response {
        try await changeGroup(request, context, session, adding: false)
    }

    private func changeGroup(_ request: Request, _ context: KizunaRequestContext, _ session: ConsoleSession, adding: Bool) async throws -> Response {
        let form = try await request.form(UserForm.self, context: context)
        if let refusal = refusal(request, context, session, csrf: form.csrf) { return refusal }
        let user = try context.parameters.require("user")
        let group = (form.group ?? "").trimmingCharacters(in: .whitespaces)
        let text = Self.text(request)
        func refused(_ message: String, status: HTTPResponse.Status) async throws -> Response {
            let problems = [ConsolePages.Problem(field: "group", message: "\(text[.groupLabel]): \(message)")]
            return try await userPage(request, context, session, problems: problems, status: status, typedGroup: group)
        }
        // An empty name would name the groups route itself.
        if group.isEmpty { return try await refused(text[.groupNameInvalid], status: .unprocessableContent) }
        let answer = try await api.call(
            adding ? .put : .delete, "\(Self.userPath(user))/groups/\(Self.escapedSegment(group))", as: session.token, context: context)
        if answer.status == .notFound { return notFound(request, session, section: .users) }
        if let error = answer.error { return try await refused(error.message, status: answer.status) }
        return Self.redirect("\(Self.consoleUserPath(user))?notice=\(adding ? "groupAdded" : "groupRemoved")")
    }

    @Sendable func deleteUserPage(_ request: Request, context: KizunaRequestContext, session: ConsoleSession) async throws -> Response {
        guard let (user, _) = try await findUser(context, session) else { return notFound(request, session, section: .users) }
        return Self.html(ConsoleUserPages.delete(Self.frame(request, session, section: .users), user: user))
    }

    /// Deletes the account, with its sessions and devices, once its identifier was typed to confirm.
    @Sendable func deleteUser(_ request: Request, context: KizunaRequestContext, session: ConsoleSession) async throws -> Response {
        let form = try await request.form(UserForm.self, context: context)
        if let refusal = refusal(request, context, session, csrf: form.csrf) { return refusal }
        guard let (user, _) = try await findUser(context, session) else { return notFound(request, session, section: .users) }
        let frame = Self.frame(request, session, section: .users)
        guard form.confirm?.trimmingCharacters(in: .whitespaces) == user.identifier else {
            let problems = [ConsolePages.Problem(field: "confirm", message: frame.text[.deleteMismatch])]
            return Self.html(ConsoleUserPages.delete(frame, user: user, typed: form.confirm ?? "", problems: problems), status: .unprocessableContent)
        }
        let answer = try await api.call(.delete, Self.userPath(user.id), as: session.token, context: context)
        if let error = answer.error {
            return Self.html(ConsoleUserPages.delete(frame, user: user, problems: Self.userProblems(error)), status: answer.status)
        }
        return Self.redirect("/console/users?notice=deleted")
    }

    // MARK: Helpers

    /// The account the path names (by id or identifier) and its groups, or nil when there is none.
    private func findUser(_ context: KizunaRequestContext, _ session: ConsoleSession) async throws -> (UserRecord, [String])? {
        let id = try context.parameters.require("user")
        let answer = try await api.call(.get, Self.userPath(id), as: session.token, context: context)
        if answer.status == .notFound { return nil }
        if let error = answer.error { throw error }
        let user = try answer.decode(UserRecord.self)
        let groups = try await api.call(.get, "\(Self.userPath(user.id))/groups", as: session.token, context: context)
        if let error = groups.error { throw error }
        return (user, try groups.decode(UserGroups.self).groups)
    }

    private static func userProblems(_ error: KizunaError) -> [ConsolePages.Problem] {
        ConsolePages.problems(error) { _ in nil }
    }

    static func userPath(_ user: String) -> String {
        "/v1/admin/users/\(escapedSegment(user))"
    }

    static func consoleUserPath(_ user: String) -> String {
        "/console/users/\(escapedSegment(user))"
    }

    /// `items` as a URL query, each name and value percent-encoded.
    static func query(_ items: [URLQueryItem]) -> String {
        items.map { "\(escapedSegment($0.name))=\(escapedSegment($0.value ?? ""))" }.joined(separator: "&")
    }
}
