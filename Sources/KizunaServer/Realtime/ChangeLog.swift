import Foundation
import KizunaCore
import SQLKit

/// One row of the `changes` log: something clients can observe changed, in commit order.
package struct ChangeRecord: Sendable, Hashable, Codable {
    /// Monotonic position in the log; a reconnecting subscriber sends the last one it saw.
    package var seq: Int64
    /// What changed: `config`, `gate`, `app`, and later data models.
    package var kind: String
    /// The changed entity; for config and gate, the app id.
    package var entityId: String
    /// Who may see it, for owner-scoped records; `nil` for app-wide changes.
    package var owner: String?
    /// The entity's new version; 0 when it was removed.
    package var version: Int64
    /// A small JSON payload for subscribers, or `nil`.
    package var payload: String?
    package var createdAt: Date
}

/// Appends to and reads the `changes` log.
///
/// A change is written in the same transaction as the change itself. On PostgreSQL the writer takes a transaction
/// advisory lock first, so sequence numbers commit in order and a reader that reads "after my last seq" never
/// skips a row that commits late; then `pg_notify` wakes every instance at commit. On SQLite writers are already
/// serialized and the writing process wakes its own readers (see ``ChangeFeed/poke()``).
package enum ChangeLog {
    /// The PostgreSQL notification channel.
    package static let channel = "kizuna_changes"

    /// Appends a change inside the caller's transaction and returns its seq.
    @discardableResult
    package static func append(
        kind: String,
        entityId: String,
        owner: String? = nil,
        version: Int64,
        payload: String? = nil,
        on db: any SQLDatabase
    ) async throws -> Int64 {
        let postgres = db.dialect.name == "postgresql"
        if postgres { try await AdvisoryLock.changeOrder.hold(on: db) }
        guard
            let row = try await db.raw(
                """
                INSERT INTO changes (kind, entity_id, owner, version, payload, created_at)
                VALUES (\(bind: kind), \(bind: entityId), \(bind: owner), \(bind: version), \(bind: payload), \(bind: EpochMillis.now))
                RETURNING seq
                """
            ).first()
        else { throw ChangeLogError.noSequence }
        let seq = try row.decode(column: "seq", as: Int64.self)
        if postgres { try await db.raw("SELECT pg_notify(\(bind: channel), \(bind: String(seq)))").run() }
        return seq
    }

    /// Up to `limit` changes after `seq`, oldest first; only `kinds` and `entityId` when given.
    package static func read(
        after seq: Int64,
        limit: Int,
        kinds: [String]? = nil,
        entityId: String? = nil,
        on db: any SQLDatabase
    ) async throws -> [ChangeRecord] {
        let query = db.select().columns("seq", "kind", "entity_id", "owner", "version", "payload", "created_at").from("changes")
            .where("seq", .greaterThan, SQLBind(seq))
        if let kinds { query.where("kind", .in, SQLBind.group(kinds)) }
        if let entityId { query.where("entity_id", .equal, SQLBind(entityId)) }
        return try await query.orderBy("seq").limit(limit).all().map { row in
            ChangeRecord(
                seq: try row.decode(column: "seq", as: Int64.self),
                kind: try row.decode(column: "kind", as: String.self),
                entityId: try row.decode(column: "entity_id", as: String.self),
                owner: try row.decode(column: "owner", as: String?.self),
                version: try row.decode(column: "version", as: Int64.self),
                payload: try row.decode(column: "payload", as: String?.self),
                createdAt: EpochMillis.date(try row.decode(column: "created_at", as: Int64.self))
            )
        }
    }

    /// Deletes changes made before `horizon` (epoch milliseconds), in batches of `batch`, always keeping the newest
    /// change so the log's position survives. A subscriber resuming from before the oldest kept change has missed
    /// some and starts over (see ``oldestSeq(on:)``).
    /// - Returns: How many changes were deleted.
    @discardableResult
    package static func prune(before horizon: Int64, batch: Int = 1000, on database: KizunaDatabase) async throws -> Int {
        var pruned = 0
        while true {
            let chosen: SQLQueryString = """
                SELECT seq FROM changes WHERE created_at < \(bind: horizon) AND seq < (SELECT MAX(seq) FROM changes) \
                ORDER BY seq LIMIT \(literal: batch)
                """
            let deleted = try await database.transaction { db in
                try await db.raw("DELETE FROM changes WHERE seq IN (\(chosen)) RETURNING seq").all().count
            }
            pruned += deleted
            if deleted < batch { return pruned }
        }
    }

    /// The newest seq, or 0 for an empty log.
    package static func latestSeq(on db: any SQLDatabase) async throws -> Int64 {
        try await db.raw("SELECT COALESCE(MAX(seq), 0) AS seq FROM changes").first()?.decode(column: "seq", as: Int64.self) ?? 0
    }

    /// The oldest seq still kept, or `nil` for an empty log: a subscriber behind it missed pruned changes.
    package static func oldestSeq(on db: any SQLDatabase) async throws -> Int64? {
        try await db.raw("SELECT MIN(seq) AS seq FROM changes").first()?.decode(column: "seq", as: Int64?.self)
    }

    enum ChangeLogError: Error { case noSequence }
}
