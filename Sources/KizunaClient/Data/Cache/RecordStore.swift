import Foundation
import GRDB
import KizunaCore

/// The offline cache's tables in the SDK's database (``LocalDatabase``): each user's copy of the records they may
/// read, and where each model's copy is in the server's change log.
///
/// A record is written only by a change at least as new as the one it holds (its `seq`), so changes that arrive out of
/// order — a subscription's delivery after a sync page that already had a later version, the create and the delete of
/// one record on two subscriptions — leave the newest. A deleted record stays as a tombstone for the same reason (a
/// late create must not bring it back); a full sync drops tombstones and whatever else it did not see.
struct RecordStore: Sendable {
    let database: DatabaseQueue

    /// A model's sync state for one user.
    struct SyncState: Sendable, Equatable {
        /// The fields the cached records hold.
        var fields: [String]
        /// The `lastSeq` of the last complete sync.
        var lastSeq: String
        /// The last full sync's generation.
        var generation: Int64
        /// When the last full sync finished (epoch milliseconds).
        var fullSyncAt: Int64 = 0

        /// Whether the next sync of the model, holding `fields`, must start from the start: there was none, the fields
        /// changed, or the last full sync is older than `interval`.
        static func needsFullSync(_ state: SyncState?, fields: [String], now: Int64, interval: Duration) -> Bool {
            guard let state, state.fields == fields else { return true }
            return now - state.fullSyncAt >= interval.components.seconds * 1000
        }
    }

    func syncState(user: String, model: String) throws(KizunaError) -> SyncState? {
        try read { db in
            guard let row = try GRDB.Row.fetchOne(db, sql: "SELECT * FROM syncs WHERE userId = ? AND model = ?", arguments: [user, model])
            else { return nil }
            let fields: String = row["fields"]
            return SyncState(
                fields: fields.split(separator: " ").map(String.init), lastSeq: row["lastSeq"], generation: row["generation"],
                fullSyncAt: row["fullSyncAt"])
        }
    }

    /// Writes records of `model` as of the change at `seq` (a sync page's last seq, or a delivery's), in one
    /// transaction; a record with `_deleted` becomes a tombstone. Marks each with `generation`.
    /// - Returns: The records that took effect (not those the store already had newer), by id, with their `_version`
    ///   when they carry one.
    @discardableResult
    func write(
        _ records: [[String: JSONValue]], user: String, model: String, seq: Int64, generation: Int64
    ) async throws(KizunaError) -> [String: Int?] {
        let rows = records.compactMap { record -> (String, String, Bool, Int?)? in
            guard let id = record["id"]?.stringValue else { return nil }
            var stored = record
            let deleted = stored.removeValue(forKey: "_deleted") == .bool(true)
            return (id, String(decoding: JSONValue.object(stored).jsonBytes, as: UTF8.self), deleted, record["_version"]?.numberValue.map { Int($0) })
        }
        return try await write { db in
            var written: [String: Int?] = [:]
            for (id, text, deleted, version) in rows {
                // A newer version in the store keeps its record and seq; the generation is set either way (the record
                // still exists as of this sync). The seq answered says which won.
                let kept = try Int64.fetchOne(
                    db,
                    sql: """
                        INSERT INTO records (userId, model, id, record, seq, generation, deleted) VALUES (?, ?, ?, ?, ?, ?, ?)
                        ON CONFLICT (userId, model, id) DO UPDATE SET
                            record = CASE WHEN excluded.seq >= records.seq THEN excluded.record ELSE records.record END,
                            deleted = CASE WHEN excluded.seq >= records.seq THEN excluded.deleted ELSE records.deleted END,
                            seq = max(excluded.seq, records.seq),
                            generation = excluded.generation
                        RETURNING seq
                        """,
                    arguments: [user, model, id, text, seq, generation, deleted])
                if kept == seq { written[id] = version }
            }
            return written
        }
    }

    /// Records a complete sync: its `lastSeq`, fields and generation; after a full sync, drops every record of the
    /// model it did not see (another generation), tombstones included.
    func finishSync(user: String, model: String, state: SyncState, full: Bool) async throws(KizunaError) {
        try await write { db in
            // An incremental sync keeps the full sync's time.
            try db.execute(
                sql: """
                    INSERT INTO syncs (userId, model, fields, lastSeq, generation, fullSyncAt) VALUES (?, ?, ?, ?, ?, ?)
                    ON CONFLICT (userId, model) DO UPDATE SET fields = excluded.fields, lastSeq = excluded.lastSeq,
                        generation = excluded.generation, fullSyncAt = CASE WHEN ? THEN excluded.fullSyncAt ELSE syncs.fullSyncAt END
                    """,
                arguments: [user, model, state.fields.joined(separator: " "), state.lastSeq, state.generation, state.fullSyncAt, full])
            if full {
                try db.execute(
                    sql: "DELETE FROM records WHERE userId = ? AND model = ? AND generation <> ?", arguments: [user, model, state.generation])
            }
        }
    }

    /// The live (not deleted) records of `model` for `user` whose fields hold `matching`'s scalar values (tested by
    /// SQLite; lists and objects are left to the caller), in id order.
    func records(user: String, model: String, matching: [String: JSONValue]) throws(KizunaError) -> [(id: String, record: [String: JSONValue])] {
        var sql = "SELECT id, record FROM records WHERE userId = ? AND model = ? AND deleted = 0"
        var arguments: StatementArguments = [user, model]
        for (name, value) in matching.sorted(by: { $0.key < $1.key }) {
            let path = "$.\"\(name.replacingOccurrences(of: "\"", with: ""))\""
            switch value {
            case .null:
                sql += " AND json_extract(record, ?) IS NULL"
                _ = arguments.append(contentsOf: [path])
            case .string(let text):
                sql += " AND json_extract(record, ?) = ?"
                _ = arguments.append(contentsOf: [path, text])
            case .number(let number):
                sql += " AND json_extract(record, ?) = ?"
                _ = arguments.append(contentsOf: [path, number])
            case .bool(let flag):
                sql += " AND json_extract(record, ?) = ?"
                _ = arguments.append(contentsOf: [path, flag ? 1 : 0])
            case .array, .object:
                continue
            }
        }
        sql += " ORDER BY id"
        let statement = sql
        let bound = arguments
        return try read { db in
            try GRDB.Row.fetchAll(db, sql: statement, arguments: bound).map { row in
                let id: String = row["id"]
                let text: String = row["record"]
                let record = try KizunaHTTPClient.decoder.decode(JSONValue.self, from: Data(text.utf8)).objectValue ?? [:]
                return (id, record)
            }
        }
    }

    private func read<T>(_ body: (Database) throws -> T) throws(KizunaError) -> T {
        do {
            return try database.read(body)
        } catch {
            throw KizunaError(.internalError, "The SDK's offline cache could not be read: \(error)")
        }
    }

    private func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws(KizunaError) -> T {
        do {
            return try await database.write(body)
        } catch {
            throw KizunaError(.internalError, "The SDK's offline cache could not be written: \(error)")
        }
    }
}
