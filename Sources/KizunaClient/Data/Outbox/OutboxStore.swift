import Foundation
import GRDB
import KizunaCore

/// The outbox's rows in the SDK's database (``LocalDatabase``).
///
/// Every state change is one statement, so a kill leaves each item either before or after it; an item found `sending`
/// at open was on the wire when the app stopped, and is sent again with its id.
struct OutboxStore: Sendable {
    private let database: DatabaseQueue

    init(database: DatabaseQueue) {
        self.database = database
    }

    /// The row an item is kept in; `userId` is who queued it (`nil`: nobody signed in).
    struct Row: Sendable, Hashable {
        var seq: Int64
        var item: OutboxItem
        var userId: String?
    }

    /// Opens, creating or migrating, the database at `url` on its own (tests; the SDK shares its ``LocalDatabase``).
    static func open(at url: URL) throws(KizunaError) -> OutboxStore {
        OutboxStore(database: try LocalDatabase.open(at: url))
    }

    /// Every row, in the order queued; a `sending` one (the app stopped while it was on the wire) as `pending`.
    func rows() throws(KizunaError) -> [Row] {
        try run {
            try $0.read { db in try GRDB.Row.fetchAll(db, sql: "SELECT * FROM outbox ORDER BY seq").map(Self.row) }
        }
    }

    /// Stores a new item, pending; answers its row.
    func insert(_ item: OutboxItem, userId: String?) async throws(KizunaError) -> Row {
        let mutation = String(decoding: try Self.encode(item.mutation), as: UTF8.self)
        let seq = try await runAsync { database in
            try await database.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA synchronous = FULL")
                defer { try? db.execute(sql: "PRAGMA synchronous = NORMAL") }
                try db.execute(
                    sql: "INSERT INTO outbox (id, mutation, userId, state, attempts, queuedAt) VALUES (?, ?, ?, 'pending', 0, ?)",
                    arguments: [item.id, mutation, userId, EpochMillis.from(item.queuedAt)])
                return db.lastInsertedRowID
            }
        }
        return Row(seq: seq, item: item, userId: userId)
    }

    /// Writes an item's mutation and state; a sent item's row is deleted (the record is the server's now).
    func save(_ item: OutboxItem) async throws(KizunaError) {
        let id = item.id
        guard case .sent = item.state else {
            let (state, error): (String, String?) =
                switch item.state {
                case .pending, .sent: ("pending", nil)
                case .sending: ("sending", nil)
                case .failed(let failure): ("failed", Self.errorText(failure))
                }
            let current = item.current.map { String(decoding: JSONValue.object($0).jsonBytes, as: UTF8.self) }
            let attempts = item.attempts
            let mutation = String(decoding: try Self.encode(item.mutation), as: UTF8.self)
            try await runAsync { database in
                try await database.write { db in
                    try db.execute(
                        sql: "UPDATE outbox SET mutation = ?, state = ?, attempts = ?, error = ?, current = ? WHERE id = ?",
                        arguments: [mutation, state, attempts, error, current, id])
                }
            }
            return
        }
        try await delete(id)
    }

    /// Removes an item.
    func delete(_ id: String) async throws(KizunaError) {
        try await runAsync { database in
            try await database.write { db in try db.execute(sql: "DELETE FROM outbox WHERE id = ?", arguments: [id]) }
        }
    }

    // MARK: Rows and JSON

    private static func row(_ row: GRDB.Row) throws -> Row {
        let id: String = row["id"]
        let mutationText: String = row["mutation"]
        let mutation = try KizunaHTTPClient.decoder.decode(OutboxMutation.self, from: Data(mutationText.utf8))
        let stateText: String = row["state"]
        var state = OutboxItem.State.pending
        if stateText == "failed" {
            let errorText: String? = row["error"]
            state = .failed(
                errorText.flatMap { try? KizunaHTTPClient.decoder.decode(ErrorEnvelope.self, from: Data($0.utf8)).kizunaError }
                    ?? KizunaError(.internalError, "The stored error could not be read."))
        }
        let currentText: String? = row["current"]
        let current = currentText.flatMap { try? KizunaHTTPClient.decoder.decode(JSONValue.self, from: Data($0.utf8)).objectValue }
        let queuedAt: Int64 = row["queuedAt"]
        let item = OutboxItem(
            id: id, mutation: mutation, state: state, attempts: row["attempts"], current: current,
            queuedAt: EpochMillis.date(queuedAt))
        return Row(seq: row["seq"], item: item, userId: row["userId"])
    }

    private static func encode(_ mutation: OutboxMutation) throws(KizunaError) -> Data {
        do {
            return try JSONEncoder().encode(mutation)
        } catch {
            throw KizunaError(.internalError, "The mutation could not be stored: \(error)")
        }
    }

    /// A refusal as stored: KizunaCore's error envelope, the form the server sends it in.
    static func errorText(_ error: KizunaError) -> String? {
        (try? JSONEncoder().encode(ErrorEnvelope(error))).map { String(decoding: $0, as: UTF8.self) }
    }

    private func run<T>(_ body: (DatabaseQueue) throws -> T) throws(KizunaError) -> T {
        do {
            return try body(database)
        } catch {
            throw KizunaError(.internalError, "The SDK's outbox could not be read: \(error)")
        }
    }

    private func runAsync<T>(_ body: (DatabaseQueue) async throws -> T) async throws(KizunaError) -> T {
        do {
            return try await body(database)
        } catch {
            throw KizunaError(.internalError, "The SDK's outbox could not be written: \(error)")
        }
    }
}
