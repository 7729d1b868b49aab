import Foundation
import KizunaCore

/// The admin API (`/v1/admin/…`), for tools and scripts that hold an admin token.
public struct AdminClient: Sendable {
    let http: KizunaHTTPClient

    /// The server's base URL.
    public var server: URL { http.baseURL }

    /// Creates an admin client.
    /// - Parameters:
    ///   - server: The server's base URL.
    ///   - token: An admin token (`kza_…`).
    public init(server: URL, token: String) {
        http = KizunaHTTPClient(baseURL: server, token: token)
    }

    /// Registers an app. - Throws: `validation_failed` listing every problem, `conflict`, `unauthorized`.
    public func createApp(_ app: NewApp) async throws(KizunaError) -> AppRecord {
        try await http.send("POST", "/v1/admin/apps", body: app)
    }

    /// Every app, ordered by id.
    public func apps() async throws(KizunaError) -> [AppRecord] {
        try await http.send("GET", "/v1/admin/apps", as: AppList.self).apps
    }

    /// One app. - Throws: `not_found`.
    public func app(id: String) async throws(KizunaError) -> AppRecord {
        try await http.send("GET", "/v1/admin/apps/\(try pathSegment(id))")
    }

    /// Changes some of an app's fields. - Throws: `not_found`, `validation_failed`, `conflict`.
    public func updateApp(id: String, _ patch: AppPatch) async throws(KizunaError) -> AppRecord {
        try await http.send("PATCH", "/v1/admin/apps/\(try pathSegment(id))", body: patch)
    }

    /// Removes an app. - Throws: `not_found`.
    public func deleteApp(id: String) async throws(KizunaError) {
        try await http.send("DELETE", "/v1/admin/apps/\(try pathSegment(id))")
    }
}

/// `id` as one URL path segment: percent-encoded, `/` included.
/// - Throws: `bad_request` naming the id when it cannot be encoded.
func pathSegment(_ id: String) throws(KizunaError) -> String {
    guard let encoded = id.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(CharacterSet(charactersIn: "/"))) else {
        throw KizunaError(.badRequest, "'\(id)' cannot be used as an id in a URL.", field: "id")
    }
    return encoded
}
