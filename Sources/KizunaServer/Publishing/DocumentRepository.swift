import Foundation
import KizunaCore
import SQLKit

/// What publishing a document of some kind does to the store besides recording it, in the publish's transaction:
/// it sees the document being replaced (the empty document when none was published) and the version being
/// published, and may refuse the publish by throwing, which rolls everything back. The data schema's tables follow
/// its models this way.
package typealias PublishEffect = @Sendable (_ replaced: JSONValue, _ version: Int64, _ db: any SQLDatabase) async throws -> Void

/// Stores published documents and their history.
package protocol DocumentRepository: Sendable {
    /// The current version, or ``PublishedDocument/initial`` when nothing was published.
    func current(app: String, kind: DocumentKind) async throws -> PublishedDocument
    /// A kept version, or `nil`.
    func find(app: String, kind: DocumentKind, version: Int64) async throws -> PublishedDocument?
    /// Kept versions, newest first, below `before` when given.
    func history(app: String, kind: DocumentKind, before: Int64?, limit: Int) async throws -> [DocumentVersionInfo]
    /// Publishes `document` as the next version if the current one is `expected`, runs `effect`, appends a change,
    /// and prunes versions beyond `retention`, all in one transaction.
    ///
    /// - Throws: `not_found` for an unknown app; `precondition_failed` when the current version is not `expected`;
    ///   what `effect` throws.
    func publish(
        app: String,
        kind: DocumentKind,
        document body: JSONValue,
        expected: ExpectedVersion,
        author: String,
        message: String?,
        rollbackOf: Int64?,
        retention: Int,
        effect: PublishEffect?
    ) async throws -> PublishedDocument
}

extension DocumentRepository {
    /// Publishes a document whose kind has no effect on the store beyond being recorded.
    package func publish(
        app: String,
        kind: DocumentKind,
        document body: JSONValue,
        expected: ExpectedVersion,
        author: String,
        message: String?,
        rollbackOf: Int64?,
        retention: Int
    ) async throws -> PublishedDocument {
        try await publish(
            app: app, kind: kind, document: body, expected: expected, author: author, message: message, rollbackOf: rollbackOf,
            retention: retention, effect: nil)
    }
}
