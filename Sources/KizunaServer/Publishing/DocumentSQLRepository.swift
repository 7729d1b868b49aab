import Foundation
import KizunaCore
import SQLKit

/// ``DocumentRepository`` over SQLite or PostgreSQL.
package struct DocumentSQLRepository: DocumentRepository {
    let database: KizunaDatabase
    /// Told after a publish commits, so this process's change feed reads it at once.
    let didCommit: @Sendable () -> Void

    package init(database: KizunaDatabase, didCommit: @escaping @Sendable () -> Void = {}) {
        self.database = database
        self.didCommit = didCommit
    }

    private static let columns = ["version", "body", "author", "message", "rollback_of", "created_at"]

    package func current(app: String, kind: DocumentKind) async throws -> PublishedDocument {
        try await Self.current(app: app, kind: kind, database) ?? .initial
    }

    package func find(app: String, kind: DocumentKind, version: Int64) async throws -> PublishedDocument? {
        try await Self.select(app: app, kind: kind, database).where("version", .equal, SQLBind(version)).first().map(Self.document)
    }

    package func history(app: String, kind: DocumentKind, before: Int64?, limit: Int) async throws -> [DocumentVersionInfo] {
        let query = database.select().columns("version", "author", "message", "rollback_of", "created_at").from("published_documents")
            .where("app_id", .equal, SQLBind(app)).where("kind", .equal, SQLBind(kind.rawValue))
        if let before { query.where("version", .lessThan, SQLBind(before)) }
        return try await query.orderBy("version", .descending).limit(limit).all().map { row in
            DocumentVersionInfo(
                version: try row.decode(column: "version", as: Int64.self),
                author: try row.decode(column: "author", as: String.self),
                message: try row.decode(column: "message", as: String?.self),
                rollbackOf: try row.decode(column: "rollback_of", as: Int64?.self),
                publishedAt: EpochMillis.date(try row.decode(column: "created_at", as: Int64.self))
            )
        }
    }

    package func publish(
        app: String,
        kind: DocumentKind,
        document body: JSONValue,
        expected: ExpectedVersion,
        author: String,
        message: String?,
        rollbackOf: Int64?,
        retention: Int,
        effect: PublishEffect?
    ) async throws -> PublishedDocument {
        let text = String(decoding: try Self.encoder.encode(body), as: UTF8.self)
        let published = try await database.transaction { db in
            // The app row is the per-app lock: concurrent publishes to one app take turns here on PostgreSQL
            // (SQLite's writers are serialized already), so exactly one of two racing publishes sees its ETag match.
            let lock = db.select().column("id").from("apps").where("id", .equal, SQLBind(app))
            lock.for(.update)
            guard try await lock.first() != nil else {
                throw KizunaError.noSuchApp(app)
            }
            let replaced = try await Self.current(app: app, kind: kind, db)
            let current = replaced?.version ?? 0
            if case .version(let version) = expected, version != current {
                throw KizunaError(
                    .preconditionFailed,
                    "The \(kind.title) changed: If-Match names version \(version) but version \(current) is current. "
                        + "Fetch it, reapply your change and publish again.",
                    field: "If-Match"
                )
            }
            try await effect?(replaced?.document ?? PublishedDocument.initial.document, current + 1, db)
            let document = PublishedDocument(
                version: current + 1,
                document: body,
                author: author,
                message: message,
                rollbackOf: rollbackOf,
                publishedAt: EpochMillis.date(EpochMillis.now)
            )
            try await db.insert(into: "published_documents")
                .columns(["app_id", "kind"] + Self.columns)
                .values(
                    SQLBind(app), SQLBind(kind.rawValue), SQLBind(document.version), SQLBind(text), SQLBind(author), SQLBind(message),
                    SQLBind(rollbackOf), SQLBind(EpochMillis.from(document.publishedAt))
                )
                .run()
            try await db.delete(from: "published_documents")
                .where("app_id", .equal, SQLBind(app)).where("kind", .equal, SQLBind(kind.rawValue))
                .where("version", .lessThanOrEqual, SQLBind(document.version - Int64(retention)))
                .run()
            try await ChangeLog.append(kind: kind.rawValue, entityId: app, version: document.version, on: db)
            return document
        }
        didCommit()
        return published
    }

    private static let encoder = WireFormat.canonicalEncoder()

    private static func select(app: String, kind: DocumentKind, _ db: any SQLDatabase) -> SQLSelectBuilder {
        db.select().columns(columns).from("published_documents")
            .where("app_id", .equal, SQLBind(app)).where("kind", .equal, SQLBind(kind.rawValue))
    }

    private static func current(app: String, kind: DocumentKind, _ db: any SQLDatabase) async throws -> PublishedDocument? {
        try await select(app: app, kind: kind, db).orderBy("version", .descending).limit(1).first().map(document)
    }

    private static func document(_ row: any SQLRow) throws -> PublishedDocument {
        let body = try row.decode(column: "body", as: String.self)
        return PublishedDocument(
            version: try row.decode(column: "version", as: Int64.self),
            document: try JSONValue(parsing: body),
            author: try row.decode(column: "author", as: String.self),
            message: try row.decode(column: "message", as: String?.self),
            rollbackOf: try row.decode(column: "rollback_of", as: Int64?.self),
            publishedAt: EpochMillis.date(try row.decode(column: "created_at", as: Int64.self))
        )
    }
}
