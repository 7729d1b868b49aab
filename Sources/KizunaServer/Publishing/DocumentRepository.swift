import Foundation
import KizunaCore

/// Stores published documents and their history.
package protocol DocumentRepository: Sendable {
    /// The current version, or ``PublishedDocument/initial`` when nothing was published.
    func current(app: String, kind: DocumentKind) async throws -> PublishedDocument
    /// A kept version, or `nil`.
    func find(app: String, kind: DocumentKind, version: Int64) async throws -> PublishedDocument?
    /// Kept versions, newest first, below `before` when given.
    func history(app: String, kind: DocumentKind, before: Int64?, limit: Int) async throws -> [DocumentVersionInfo]
    /// Publishes `document` as the next version if the current one is `expected`, appends a change, and prunes
    /// versions beyond `retention`.
    ///
    /// - Throws: `not_found` for an unknown app; `precondition_failed` when the current version is not `expected`.
    func publish(
        app: String,
        kind: DocumentKind,
        document body: JSONValue,
        expected: ExpectedVersion,
        author: String,
        message: String?,
        rollbackOf: Int64?,
        retention: Int
    ) async throws -> PublishedDocument
}
