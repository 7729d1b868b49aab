import Foundation
import PostgresKit
import SQLiteKit

/// The statements Kizuna runs for `createNote` and `listNotes(limit:)` on the benchmark's model,
/// `type Note @model @auth(rules: [{allow: owner}]) { text: String! rank: Int }`, written out by hand: its table has
/// the columns `id`, `text`, `rank`, `createdAt`, `updatedAt`, `owner`, `_version` (the model's field order), then
/// `_deleted` and `_seq`.
///
/// Kept statement for statement with `DataRuntime.create`/`insert` (`Sources/KizunaServer/Data/DataRuntime+Mutations.swift`),
/// `ChangeLog.append` (`Realtime/ChangeLog.swift`) and `KeysetPage` (`Data/KeysetPage.swift`): when those change,
/// change this too, or the ratio compares different work.
struct NoteStatements: Sendable {
    /// The model's table, `data_<10 hex of SHA-256(app)>_Note`.
    let table: String
    /// The app id, which Kizuna writes as the change's `entity_id`.
    let app: String
    /// The account id the rows belong to (the `owner` column).
    let owner: String
    /// The `text` of every row written.
    let text: String

    /// `ChangeLog.orderLock` and `ChangeLog.channel`.
    static let orderLock: Int64 = 0x6B69_7A75_6E61_01
    static let channel = "kizuna_changes"

    /// What `createNote(input: { text })` does in its transaction: the existence check of the new id, the `changes`
    /// row (on PostgreSQL behind the ordering lock, then `pg_notify`), and the row itself, `RETURNING *`, decoded.
    /// `orderLock` and `notify` false leave those statements out, to see what each costs.
    func create(in store: PeerStore, orderLock: Bool = true, notify: Bool = true) async throws {
        let id = UUID().uuidString.lowercased()
        let now = Self.now
        let postgres = store.engine == .postgres
        let table = table, app = app, owner = owner, text = text
        try await store.transaction { db in
            // `current(_:id:…)`: is the id taken (a retried create)?
            if try await db.raw("SELECT * FROM \(ident: table) WHERE \(ident: "id") = \(bind: id)").first() != nil {
                throw PeerError("\(id) exists already")
            }
            // ChangeLog.append: the payload is what Kizuna's canonical encoder writes for an owner-rule model.
            if postgres && orderLock { try await db.raw("SELECT pg_advisory_xact_lock(\(bind: Self.orderLock))").run() }
            let payload = #"{"deleted":false,"facts":{"owner":"\#(owner)"},"id":"\#(id)","model":"Note"}"#
            guard
                let change = try await db.raw(
                    """
                    INSERT INTO changes (kind, entity_id, owner, version, payload, created_at)
                    VALUES (\(bind: "data"), \(bind: app), \(bind: owner as String?), \(bind: Int64(1)), \(bind: payload as String?), \
                    \(bind: Self.now))
                    RETURNING seq
                    """
                ).first()
            else { throw PeerError("INSERT INTO changes returned no seq") }
            let seq = try change.decode(column: "seq", as: Int64.self)
            if postgres && notify { try await db.raw("SELECT pg_notify(\(bind: Self.channel), \(bind: String(seq)))").run() }
            guard let row = try await db.raw(Self.insertRow(table: table, id: id, text: text, owner: owner, now: now, seq: seq)).first() else {
                throw PeerError("\(id) was inserted concurrently")
            }
            _ = try NoteRow(row)
        }
    }

    /// The row INSERT alone, autocommitted (after this process's earlier SQLite writers): what the change log and
    /// the transaction around it cost is `create` less this. `_seq` gets a distinct increasing value, as a real
    /// change's would be.
    func insertPlain(in store: PeerStore, seq: Int64) async throws {
        let insert = Self.insertRow(table: table, id: UUID().uuidString.lowercased(), text: text, owner: owner, now: Self.now, seq: seq)
        try await store.write { db in
            guard let row = try await db.raw(insert).first() else { throw PeerError("the INSERT returned no row") }
            _ = try NoteRow(row)
        }
    }

    /// `listNotes(limit:)`'s first page for the owner, as `KeysetPage` writes it for the default order (the owner rule
    /// as the filter; `limit + 1` rows to learn whether a next page exists), on a connection of its own; the rows are
    /// decoded and the next page's keyset read from the last one kept, as `KeysetPage.page(of:)` does.
    /// - Returns: The rows on the page.
    func page(in store: PeerStore, limit: Int) async throws -> Int {
        let table = table
        let query: SQLQueryString = """
            SELECT * FROM \(ident: table) \
            WHERE \(ident: table).\(ident: "_deleted") = \(false) AND ((\(ident: table).\(ident: "owner") = \(bind: owner))) \
            ORDER BY \(ident: table).\(ident: "createdAt") ASC, \(ident: table).\(ident: "id") ASC LIMIT \(literal: limit + 1)
            """
        let rows = try await store.withSession { db in try await db.raw(query).all() }
        let kept = rows.prefix(limit)
        let notes = try kept.map(NoteRow.init)
        if rows.count > limit, let last = kept.last {
            _ = try (last.decode(column: "createdAt", as: Int64.self), last.decode(column: "id", as: String.self))
        }
        return notes.count
    }

    /// `DataRuntime.insert`'s INSERT: the columns the create sets, in the model's field order (`rank`, left out of
    /// the input, as a NULL literal), then `_seq`.
    private static func insertRow(table: String, id: String, text: String, owner: String, now: Int64, seq: Int64) -> SQLQueryString {
        let columns = ["id", "text", "rank", "createdAt", "updatedAt", "owner", "_version", "_seq"]
        return """
            INSERT INTO \(ident: table) (\(idents: columns, joinedBy: ", ")) \
            VALUES (\(bind: id), \(bind: text), NULL, \(bind: now), \(bind: now), \(bind: owner), \(bind: Int64(1)), \(bind: seq)) \
            ON CONFLICT (\(ident: "id")) DO NOTHING RETURNING *
            """
    }

    /// Kizuna's `EpochMillis.now`.
    static var now: Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }
}

/// A row of the Note table decoded as `DataRecords.output` decodes it: each field unless NULL, then `_deleted`.
struct NoteRow: Sendable {
    var id: String
    var text: String
    var rank: Int?
    var createdAt: Int64
    var updatedAt: Int64
    var owner: String?
    var version: Int64
    var deleted: Bool

    init(_ row: any SQLRow) throws {
        id = try row.decode(column: "id", as: String.self)
        text = try row.decode(column: "text", as: String.self)
        rank = try row.decodeNil(column: "rank") ? nil : Int(row.decode(column: "rank", as: Int64.self))
        createdAt = try row.decode(column: "createdAt", as: Int64.self)
        updatedAt = try row.decode(column: "updatedAt", as: Int64.self)
        owner = try row.decodeNil(column: "owner") ? nil : row.decode(column: "owner", as: String.self)
        version = try row.decode(column: "_version", as: Int64.self)
        deleted = try row.decode(column: "_deleted", as: Bool.self)
    }
}
