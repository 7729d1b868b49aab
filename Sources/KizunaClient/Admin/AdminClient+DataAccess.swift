import Foundation
import KizunaCore

extension AdminClient {
    /// Creates an API key for the app's `allow: public` callers; its secret is in the answer only.
    /// - Throws: `validation_failed` (expiry not 1–365 days), `not_found` for the app.
    public func createAPIKey(app: String, _ key: NewAPIKey) async throws(KizunaError) -> CreatedAPIKey {
        try await http.send("POST", "/v1/admin/apps/\(try pathSegment(app))/api-keys", body: key)
    }

    /// The app's API keys, newest first, revoked and expired ones included.
    public func apiKeys(app: String) async throws(KizunaError) -> [APIKeyInfo] {
        try await http.send("GET", "/v1/admin/apps/\(try pathSegment(app))/api-keys", as: APIKeyList.self).keys
    }

    /// Revokes an API key at once. - Throws: `not_found`.
    @discardableResult
    public func revokeAPIKey(app: String, id: String) async throws(KizunaError) -> APIKeyInfo {
        try await http.send("DELETE", "/v1/admin/apps/\(try pathSegment(app))/api-keys/\(try pathSegment(id))")
    }

    /// Runs a GraphQL document on the app's live data API, exactly as the app's endpoint would, as the operator (whom
    /// every access rule lets in) or as the account `asUser` names.
    /// - Parameters:
    ///   - document: The GraphQL document.
    ///   - app: The app's id.
    ///   - variables: The values of the document's variables.
    ///   - operationName: The operation to run, when the document has several.
    ///   - asUser: An account's id (`usr_…`) or identifier: its rules and groups decide what the document sees.
    /// - Returns: GraphQL's answer, `data`, `errors` (each with `extensions.code`) and `extensions`: problems in the
    ///   document or its fields are in the answer, not thrown.
    /// - Throws: `not_found` for the app or the account, `unauthorized`, `bad_request`.
    public func query(
        _ document: String, app: String, variables: [String: JSONValue]? = nil, operationName: String? = nil, asUser: String? = nil
    ) async throws(KizunaError) -> JSONValue {
        let request = DataQueryRequest(query: document, variables: variables, operationName: operationName, asUser: asUser)
        return try await http.send("POST", "/v1/admin/apps/\(try pathSegment(app))/graphql", body: request)
    }

    /// The groups an account (id or identifier) is in.
    public func groups(ofUser reference: String) async throws(KizunaError) -> [String] {
        try await http.send("GET", "/v1/admin/users/\(try pathSegment(reference))/groups", as: UserGroups.self).groups
    }

    /// Adds an account to a group; answers its groups.
    @discardableResult
    public func addUser(_ reference: String, toGroup group: String) async throws(KizunaError) -> [String] {
        try await http.send("PUT", "/v1/admin/users/\(try pathSegment(reference))/groups/\(try pathSegment(group))", as: UserGroups.self).groups
    }

    /// Removes an account from a group; answers its groups.
    @discardableResult
    public func removeUser(_ reference: String, fromGroup group: String) async throws(KizunaError) -> [String] {
        try await http.send("DELETE", "/v1/admin/users/\(try pathSegment(reference))/groups/\(try pathSegment(group))", as: UserGroups.self)
            .groups
    }
}
