import Foundation
import KizunaCore

extension AdminClient {
    /// The live version of an app's document. - Throws: `not_found` for an unknown app.
    public func document(_ kind: DocumentKind, app: String) async throws(KizunaError) -> PublishedDocument {
        try await http.send("GET", try documentPath(kind, app))
    }

    /// Publishes a new version.
    /// - Parameters:
    ///   - expecting: The version this one replaces; a different current version fails with `precondition_failed`.
    ///   - allowDestructive: For a data schema: also apply changes that drop or narrow stored data.
    /// - Throws: `validation_failed` listing every problem (nothing changes), `precondition_failed`, `not_found`,
    ///   and for a data schema `destructive_change` listing what would be lost.
    public func publish(
        _ kind: DocumentKind, app: String, document: JSONValue, message: String?, expecting: ExpectedVersion, allowDestructive: Bool = false
    )
        async throws(KizunaError) -> PublishedDocument
    {
        try await http.send(
            "POST", try documentPath(kind, app) + ":publish" + (allowDestructive ? "?allowDestructive=true" : ""),
            body: PublishRequest(document: document, message: message), headers: ["If-Match": expecting.ifMatch])
    }

    /// Validates a document without publishing it; for a data schema, also lists what publishing it would change.
    /// - Parameter allowDestructive: For a data schema: list destructive changes instead of refusing them.
    /// - Throws: `validation_failed` listing every problem; `destructive_change` for a data schema unless allowed.
    public func validate(
        _ kind: DocumentKind, app: String, document: JSONValue, allowDestructive: Bool = false
    ) async throws(KizunaError) -> DocumentValidation {
        try await http.send(
            "POST", try documentPath(kind, app) + ":publish?validateOnly=true" + (allowDestructive ? "&allowDestructive=true" : ""),
            body: PublishRequest(document: document, message: nil))
    }

    /// Publishes a kept version again as a new version.
    /// - Parameter allowDestructive: For a data schema: also apply changes that drop or narrow stored data.
    /// - Throws: `not_found` when the version is not kept, `precondition_failed`, `destructive_change`.
    public func rollback(
        _ kind: DocumentKind, app: String, to version: Int64, message: String?, expecting: ExpectedVersion, allowDestructive: Bool = false
    )
        async throws(KizunaError) -> PublishedDocument
    {
        try await http.send(
            "POST", try documentPath(kind, app) + ":rollback" + (allowDestructive ? "?allowDestructive=true" : ""),
            body: RollbackRequest(version: version, message: message), headers: ["If-Match": expecting.ifMatch])
    }

    /// Kept versions, newest first.
    /// - Parameters:
    ///   - limit: At most this many (1…300).
    ///   - before: Only versions older than this one (for paging).
    public func history(
        _ kind: DocumentKind, app: String, limit: Int = 50, before: Int64? = nil
    ) async throws(KizunaError)
        -> [DocumentVersionInfo]
    {
        var path = try documentPath(kind, app) + "/versions?limit=\(limit)"
        if let before { path += "&before=\(before)" }
        return try await http.send("GET", path, as: DocumentHistory.self).versions
    }

    /// One kept version. - Throws: `not_found`.
    public func document(_ kind: DocumentKind, app: String, version: Int64) async throws(KizunaError) -> PublishedDocument {
        try await http.send("GET", try documentPath(kind, app) + "/versions/\(version)")
    }

    /// The changes from version `from` to version `to` (the live version when `nil`).
    public func diff(_ kind: DocumentKind, app: String, from: Int64, to: Int64? = nil) async throws(KizunaError) -> DocumentDiff {
        try await http.send("GET", try documentPath(kind, app) + ":diff?from=\(from)" + (to.map { "&to=\($0)" } ?? ""))
    }

    /// What the update gate decides for a device, as the device would see it.
    public func checkGate(app: String, device: DeviceContext) async throws(KizunaError) -> UpdateDecision {
        try await http.send("POST", "/v1/apps/\(try pathSegment(app))/gate:check", body: device)
    }

    /// The config values a device gets.
    public func fetchConfig(app: String, device: DeviceContext) async throws(KizunaError) -> ConfigValues {
        try await http.send("POST", "/v1/apps/\(try pathSegment(app))/config:fetch", body: device)
    }

    /// The signed mirror of an app's live gate policy (a ``GateMirror`` file), as the server writes it to its
    /// mirror directory.
    public func gateMirror(app: String) async throws(KizunaError) -> Data {
        try await http.exchange("GET", "/v1/admin/apps/\(try pathSegment(app))/gate/mirror").body
    }

    /// The public key gate mirrors are signed with: what apps pass to the SDK.
    public func gateMirrorKey() async throws(KizunaError) -> GateMirror.KeyInfo {
        try await http.send("GET", "/v1/admin/gate-mirror/key")
    }

    private func documentPath(_ kind: DocumentKind, _ app: String) throws(KizunaError) -> String {
        "/v1/admin/apps/\(try pathSegment(app))/\(kind.rawValue)"
    }
}
