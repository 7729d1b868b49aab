import Foundation
import KizunaCore

/// The kinds of document an app publishes, each versioned with the same ETag, history and rollback rules.
package enum DocumentKind: String, Sendable, Hashable, CaseIterable {
    /// A remote config template.
    case config
    /// An update gate policy.
    case gate

    /// Checks a document of this kind, listing every problem.
    func validate(_ body: JSONValue) throws(KizunaError) {
        switch self {
        case .config: _ = try RemoteConfigTemplate(parsing: body)
        case .gate: _ = try GatePolicy(parsing: body)
        }
    }

    /// What people call it, for messages.
    var title: String {
        switch self {
        case .config: "config template"
        case .gate: "gate policy"
        }
    }
}

/// One published version of a document.
package struct PublishedDocument: Sendable, Codable, Hashable {
    /// The version, counting from 1; version 0 is the empty document an app starts with.
    package var version: Int64
    /// The document exactly as published.
    package var body: JSONValue
    /// The name of the admin token that published it.
    package var author: String
    /// What the publisher said about the change.
    package var message: String?
    /// For a rollback, the version it restored.
    package var rollbackOf: Int64?
    package var publishedAt: Date

    /// The strong ETag of this version: `"<version>"`.
    package var etag: String { Self.etag(version) }

    package static func etag(_ version: Int64) -> String { "\"\(version)\"" }

    /// The empty document of an app that has published nothing.
    package static let initial = PublishedDocument(
        version: 0,
        body: .object([:]),
        author: "kizuna",
        message: nil,
        rollbackOf: nil,
        publishedAt: Date(timeIntervalSince1970: 0)
    )
}

/// A version in a document's history, without its body.
package struct DocumentVersionInfo: Sendable, Codable, Hashable {
    package var version: Int64
    package var author: String
    package var message: String?
    package var rollbackOf: Int64?
    package var publishedAt: Date
}

/// What a publish expects the current version to be, from `If-Match`.
package enum ExpectedVersion: Sendable, Hashable {
    /// `If-Match: *`: whatever is current.
    case any
    /// `If-Match: "<version>"`.
    case version(Int64)
}

/// Stores published documents and their history.
package protocol DocumentRepository: Sendable {
    /// The current version, or ``PublishedDocument/initial`` when nothing was published.
    func current(app: String, kind: DocumentKind) async throws -> PublishedDocument
    /// A kept version, or `nil`.
    func find(app: String, kind: DocumentKind, version: Int64) async throws -> PublishedDocument?
    /// Kept versions, newest first, below `before` when given.
    func history(app: String, kind: DocumentKind, before: Int64?, limit: Int) async throws -> [DocumentVersionInfo]
    /// Publishes `body` as the next version if the current one is `expected`, appends a change, and prunes
    /// versions beyond `retention`.
    ///
    /// - Throws: `not_found` for an unknown app; `precondition_failed` when the current version is not `expected`.
    func publish(
        app: String,
        kind: DocumentKind,
        body: JSONValue,
        expected: ExpectedVersion,
        author: String,
        message: String?,
        rollbackOf: Int64?,
        retention: Int
    ) async throws -> PublishedDocument
}
