import Foundation
import GraphQL
import KizunaCore
import SQLKit

extension DataRuntime {
    /// The resolver of `syncXs`.
    func syncResolver(_ model: DataModel) -> GraphQLFieldResolve {
        { _, args, context, _ in
            try await self.sync(model, arguments: DataRecords.json(args), caller: DataRequest.from(context).caller)
        }
    }

    /// `syncXs(since, limit, nextToken)`: every record the caller may read that was created, changed or deleted
    /// after `since`, in the order of the changes (each row's `_seq`, its last change's position in the `changes`
    /// log), tombstones included.
    ///
    /// On PostgreSQL, change-log writers commit in seq order (``ChangeLog``), so a record committed after a sync read
    /// always has a higher seq than the sync's `lastSeq`: reading "after my last seq" never skips one. A record
    /// changed twice between syncs comes once, as it is now.
    ///
    /// `lastSeq` is `"<seq>:<time>"`: the position, and when the change at it was made (or, for the change log's head
    /// on a last page, when the sync read it: no later deletion is older). A `since` older than the
    /// tombstone retention is `sync_expired`, since deletions after it may already be pruned; the client syncs from
    /// the start instead.
    func sync(_ model: DataModel, arguments: JSONValue, caller: DataCaller) async throws -> [String: any Sendable] {
        let table = DataTables.table(app: app, model: model.name)
        var since = SyncPosition.start
        if case .string(let text)? = arguments["since"] {
            since = try SyncPosition(text)
            // An hour's margin covers clocks of several instances that disagree a little.
            if since.seq > 0, since.time < EpochMillis.now - tombstoneRetention + 3_600_000 {
                throw KizunaError(
                    .syncExpired, "since is older than the \(tombstoneRetention / 86_400_000)-day tombstone retention; sync again without it.",
                    field: "since")
            }
        }
        let scope = PageCursor.scope(of: ["sync": .string(model.name)])
        var after = since.seq
        if case .string(let token)? = arguments["nextToken"] {
            let cursor = try PageCursor.decode(token, key: cursorKey, expecting: (model.name, DataTables.seqColumn, false, scope))
            guard let position = cursor.after.first?.stringValue.flatMap({ Int64($0) }) else {
                throw KizunaError(.badCursor, "The nextToken does not hold a sync position; sync again without it.", field: "nextToken")
            }
            after = max(after, position)
        }
        let limit = Int(arguments["limit"]?.numberValue ?? Double(KeysetPage.defaultLimit))
        guard (1...KeysetPage.maximumLimit).contains(limit) else {
            throw KizunaError(.validationFailed, "limit must be between 1 and \(KeysetPage.maximumLimit); it was \(limit).", field: "limit")
        }
        let access = authorization.access(.read, on: model, for: caller)
        var conditions: [SQLQueryString] = ["\(ident: table).\(ident: DataTables.seqColumn) > \(bind: after)"]
        switch access {
        case .denied: throw refusal(.read, model: model, caller: caller)
        case .all: break
        case .rows(let condition): conditions.append("(\(condition))")
        }
        let predicate = conditions.joined(separator: " AND ")
        let query: SQLQueryString = """
            SELECT * FROM \(ident: table) WHERE \(predicate) ORDER BY \(ident: table).\(ident: DataTables.seqColumn) LIMIT \(literal: limit + 1)
            """
        // The log's head, read before the records: every change up to it is committed (writers commit in seq order),
        // so the records read next reflect all of them. A last page answers the head as its position, not its last
        // record's seq: the client has every change up to it that it may read, and a subscription resuming there has
        // nothing old to replay.
        let readAt = EpochMillis.now
        let head = try await ChangeLog.latestSeq(on: database)
        var rows = try await database.raw(query).all()
        let more = rows.count > limit
        if more { rows.removeLast(rows.count - limit) }
        var last = since
        if let row = rows.last {
            last = SyncPosition(
                seq: try row.decode(column: DataTables.seqColumn, as: Int64.self), time: try row.decode(column: "updatedAt", as: Int64.self))
        }
        if !more, head > last.seq || since.seq == 0 && rows.isEmpty {
            last = SyncPosition(seq: max(head, last.seq), time: readAt)
        }
        let next =
            more
            ? PageCursor(model: model.name, order: DataTables.seqColumn, descending: false, scope: scope, after: [.string(String(last.seq))]) : nil
        return [
            "items": try rows.map { try DataRecords.output($0, model: model) },
            "nextToken": next.map { $0.encoded(key: cursorKey) } as (any Sendable)?,
            "lastSeq": last.description,
        ]
    }

    /// Deletes the tombstones of every model that were deleted before `horizon` (epoch milliseconds), in batches of
    /// `batch` rows, each its own short transaction, so a large sweep never holds the store.
    /// - Returns: How many tombstones were deleted.
    func pruneTombstones(before horizon: Int64, batch: Int = 1000) async throws -> Int {
        var pruned = 0
        for model in data.models {
            let table = DataTables.table(app: app, model: model.name)
            while true {
                let chosen: SQLQueryString = """
                    SELECT \(ident: "id") FROM \(ident: table) WHERE \(ident: DataTables.deletedColumn) = \(true) \
                    AND \(ident: "updatedAt") < \(bind: horizon) LIMIT \(literal: batch)
                    """
                let deleted = try await database.transaction { db in
                    try await db.raw("DELETE FROM \(ident: table) WHERE \(ident: "id") IN (\(chosen)) RETURNING \(ident: "id")").all().count
                }
                pruned += deleted
                if deleted < batch { break }
            }
        }
        return pruned
    }
}

/// A sync position as `lastSeq` carries it: the seq of the last change a client has, and when that change was made.
struct SyncPosition: Sendable, Equatable, CustomStringConvertible {
    var seq: Int64
    var time: Int64

    /// Before any change.
    static let start = SyncPosition(seq: 0, time: 0)

    init(seq: Int64, time: Int64) {
        self.seq = seq
        self.time = time
    }

    /// Reads `"<seq>:<time>"`.
    /// - Throws: `validation_failed` for `since` when the text is not a `lastSeq`.
    init(_ text: String) throws(KizunaError) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let seq = Int64(parts[0]), let time = Int64(parts[1]), seq >= 0 else {
            throw KizunaError(.validationFailed, "since must be a lastSeq a sync returned, such as \"1042:1763888400000\".", field: "since")
        }
        self.init(seq: seq, time: time)
    }

    var description: String { "\(seq):\(time)" }
}
