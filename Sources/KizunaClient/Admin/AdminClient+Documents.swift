import Foundation
import KizunaCore

extension AdminClient {
    /// The two versioned documents an app has.
    public enum DocumentKind: String, Sendable, Hashable, CaseIterable {
        /// The remote config template.
        case config
        /// The update gate policy.
        case gate
    }

    /// One published version of a document.
    public struct Document: Codable, Sendable, Hashable {
        /// The version, counting from 1 (0: nothing published yet, the empty document).
        public var version: Int64
        /// The template or policy.
        public var document: JSONValue
        /// The admin token's name that published it.
        public var author: String
        /// The publish message.
        public var message: String?
        /// For a rollback, the version it restored.
        public var rollbackOf: Int64?
        /// When it was published.
        public var publishedAt: Date

        /// The ETag to send as `If-Match` when publishing over this version.
        public var etag: String { "\"\(version)\"" }
    }

    /// A version in a document's history, without its body.
    public struct VersionInfo: Codable, Sendable, Hashable {
        public var version: Int64
        public var author: String
        public var message: String?
        public var rollbackOf: Int64?
        public var publishedAt: Date
    }

    /// What changed between two versions.
    public struct Diff: Codable, Sendable, Hashable {
        public var from: Int64
        public var to: Int64
        public var changes: [JSONChange]
    }

    /// What a dry run found: the document is valid (invalid ones throw `validation_failed`).
    public struct Validation: Codable, Sendable, Hashable {
        public var valid: Bool
        public var currentVersion: Int64
    }

    /// What the base version of a publish must be.
    public enum Precondition: Sendable, Hashable {
        /// Publish only if the current version is still this one (`If-Match: "<n>"`).
        case version(Int64)
        /// Publish over whatever is current (`If-Match: *`).
        case any

        var header: String {
            switch self {
            case .version(let version): "\"\(version)\""
            case .any: "*"
            }
        }
    }

    /// The live version of an app's document. - Throws: `not_found` for an unknown app.
    public func document(_ kind: DocumentKind, app: String) async throws(KizunaError) -> Document {
        try await http.send("GET", try documentPath(kind, app))
    }

    /// Publishes a new version.
    /// - Parameters:
    ///   - expecting: The version this one replaces; a different current version fails with `precondition_failed`.
    /// - Throws: `validation_failed` listing every problem (nothing changes), `precondition_failed`, `not_found`.
    public func publish(
        _ kind: DocumentKind, app: String, document: JSONValue, message: String?, expecting: Precondition
    )
        async throws(KizunaError) -> Document
    {
        try await http.send(
            "POST", try documentPath(kind, app) + ":publish", body: PublishBody(document: document, message: message),
            headers: ["If-Match": expecting.header])
    }

    /// Validates a document without publishing it. - Throws: `validation_failed` listing every problem.
    public func validate(_ kind: DocumentKind, app: String, document: JSONValue) async throws(KizunaError) -> Validation {
        try await http.send("POST", try documentPath(kind, app) + ":publish?validateOnly=true", body: PublishBody(document: document, message: nil))
    }

    /// Publishes a kept version again as a new version.
    /// - Throws: `not_found` when the version is not kept, `precondition_failed`.
    public func rollback(
        _ kind: DocumentKind, app: String, to version: Int64, message: String?, expecting: Precondition
    )
        async throws(KizunaError) -> Document
    {
        try await http.send(
            "POST", try documentPath(kind, app) + ":rollback", body: RollbackBody(version: version, message: message),
            headers: ["If-Match": expecting.header])
    }

    /// Kept versions, newest first.
    /// - Parameters:
    ///   - limit: At most this many (1…300).
    ///   - before: Only versions older than this one (for paging).
    public func history(_ kind: DocumentKind, app: String, limit: Int = 50, before: Int64? = nil) async throws(KizunaError) -> [VersionInfo] {
        var path = try documentPath(kind, app) + "/versions?limit=\(limit)"
        if let before { path += "&before=\(before)" }
        return try await http.send("GET", path, as: HistoryBody.self).versions
    }

    /// One kept version. - Throws: `not_found`.
    public func document(_ kind: DocumentKind, app: String, version: Int64) async throws(KizunaError) -> Document {
        try await http.send("GET", try documentPath(kind, app) + "/versions/\(version)")
    }

    /// The changes from version `from` to version `to` (the live version when `nil`).
    public func diff(_ kind: DocumentKind, app: String, from: Int64, to: Int64? = nil) async throws(KizunaError) -> Diff {
        try await http.send("GET", try documentPath(kind, app) + ":diff?from=\(from)" + (to.map { "&to=\($0)" } ?? ""))
    }

    /// What the update gate decides for a device, as the device would see it.
    public func checkGate(app: String, device: DeviceContext) async throws(KizunaError) -> UpdateDecision {
        try await http.send("POST", "/v1/apps/\(try Self.segment(app))/gate:check", body: device)
    }

    /// The config values a device gets.
    public func fetchConfig(app: String, device: DeviceContext) async throws(KizunaError) -> ConfigValues {
        try await http.send("POST", "/v1/apps/\(try Self.segment(app))/config:fetch", body: device)
    }

    /// The config values one device gets, and the template version they came from.
    public struct ConfigValues: Codable, Sendable, Hashable {
        public var version: Int64
        public var values: [String: JSONValue]
    }

    private struct PublishBody: Encodable {
        var document: JSONValue
        var message: String?
    }

    private struct RollbackBody: Encodable {
        var version: Int64
        var message: String?
    }

    private struct HistoryBody: Decodable {
        var versions: [VersionInfo]
    }

    private func documentPath(_ kind: DocumentKind, _ app: String) throws(KizunaError) -> String {
        "/v1/admin/apps/\(try Self.segment(app))/\(kind.rawValue)"
    }
}
