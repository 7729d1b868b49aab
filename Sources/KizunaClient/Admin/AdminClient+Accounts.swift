import Foundation
import KizunaCore

extension AdminClient {
    /// A page of accounts in identifier order.
    /// - Parameters:
    ///   - after: The previous page's ``UserList/next``.
    ///   - limit: 1–500.
    ///   - search: Only identifiers containing this (after normalisation).
    public func users(after: String? = nil, limit: Int = 50, search: String? = nil) async throws(KizunaError) -> UserList {
        var query = [URLQueryItem(name: "limit", value: String(limit))]
        if let after { query.append(URLQueryItem(name: "after", value: after)) }
        if let search { query.append(URLQueryItem(name: "search", value: search)) }
        var components = URLComponents()
        components.queryItems = query
        return try await http.send(
            "GET", "/v1/admin/users" + (components.percentEncodedQuery.map { "?" + $0.replacingOccurrences(of: "+", with: "%2B") } ?? ""))
    }

    /// One account, named by id (`usr_…`) or identifier. - Throws: `not_found`.
    public func user(_ reference: String) async throws(KizunaError) -> UserRecord {
        try await http.send("GET", "/v1/admin/users/\(try pathSegment(reference))")
    }

    /// Disables (signing every session out) or enables an account.
    @discardableResult
    public func setUserDisabled(_ reference: String, _ disabled: Bool) async throws(KizunaError) -> UserRecord {
        try await http.send("PATCH", "/v1/admin/users/\(try pathSegment(reference))", body: UserPatch(disabled: disabled))
    }

    /// Deletes an account with its sessions and devices.
    public func deleteUser(_ reference: String) async throws(KizunaError) {
        try await http.send("DELETE", "/v1/admin/users/\(try pathSegment(reference))")
    }

    /// The account's sessions that have not expired, newest first.
    public func userSessions(_ reference: String) async throws(KizunaError) -> [SessionInfo] {
        let list: SessionList = try await http.send("GET", "/v1/admin/users/\(try pathSegment(reference))/sessions")
        return list.sessions
    }

    /// Signs one of the account's sessions out at once.
    public func endUserSession(_ reference: String, session: String) async throws(KizunaError) {
        try await http.send("DELETE", "/v1/admin/users/\(try pathSegment(reference))/sessions/\(try pathSegment(session))")
    }

    /// A single-use password-reset token and link for the account's owner (Kizuna sends no mail).
    public func createPasswordReset(_ reference: String) async throws(KizunaError) -> PasswordResetGrant {
        try await http.send("POST", "/v1/admin/users/\(try pathSegment(reference))/password-reset")
    }

    /// An app's associated-domain settings.
    public func associatedDomains(app: String) async throws(KizunaError) -> AssociatedDomainSettings {
        try await http.send("GET", "/v1/admin/apps/\(try pathSegment(app))/associated-domains")
    }

    /// Replaces an app's associated-domain settings. - Throws: `validation_failed` (with the size when the file would
    /// pass 128 KB).
    @discardableResult
    public func setAssociatedDomains(app: String, _ settings: AssociatedDomainSettings) async throws(KizunaError) -> AssociatedDomainSettings {
        try await http.send("PUT", "/v1/admin/apps/\(try pathSegment(app))/associated-domains", body: settings)
    }

    /// The apple-app-site-association bytes: the app's alone, or with `app == nil` the file the site serves.
    public func associationFile(app: String?) async throws(KizunaError) -> Data {
        var path = "/.well-known/apple-app-site-association"
        if let app { path = "/v1/admin/apps/\(try pathSegment(app))/apple-app-site-association" }
        return try await http.exchange("GET", path).body
    }
}
