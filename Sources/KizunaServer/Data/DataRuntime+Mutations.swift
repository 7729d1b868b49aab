import Foundation
import GraphQL
import KizunaCore
import SQLKit

/// A write refused because the record is not what the client expected: its `_version` moved, or a create's id is
/// taken by other content. Carries the server's current record when the caller may read it, so a client can merge
/// and retry without another round trip (AppSync answers a conflict the same way).
struct DataConflict: Error, Sendable {
    var error: KizunaError
    /// The record as stored now, as the API returns it; `nil` when the caller may not read it.
    var current: JSONValue?
}

extension DataRuntime {
    // MARK: Resolvers

    /// The resolver of `createX`.
    func createResolver(_ model: DataModel) -> GraphQLFieldResolve {
        { _, args, context, _ in
            let arguments = DataRecords.json(args)
            return try await self.create(
                model, input: arguments["input"]?.objectValue ?? [:], condition: arguments["condition"], caller: DataRequest.from(context).caller)
        }
    }

    /// The resolver of `updateX`.
    func updateResolver(_ model: DataModel) -> GraphQLFieldResolve {
        { _, args, context, _ in
            let arguments = DataRecords.json(args)
            return try await self.change(
                model, .update, input: arguments["input"]?.objectValue ?? [:], condition: arguments["condition"],
                caller: DataRequest.from(context).caller)
        }
    }

    /// The resolver of `deleteX`.
    func deleteResolver(_ model: DataModel) -> GraphQLFieldResolve {
        { _, args, context, _ in
            let arguments = DataRecords.json(args)
            return try await self.change(
                model, .delete, input: arguments["input"]?.objectValue ?? [:], condition: arguments["condition"],
                caller: DataRequest.from(context).caller)
        }
    }

    // MARK: Create

    /// `createX`: stores a new record, and a `changes` row in the same transaction.
    ///
    /// A client-generated `id` makes the create safe to retry: when the id exists with the same content and owner,
    /// the stored record is the answer (a retry after a lost response gets what the first call got); with other
    /// content, or as a tombstone, it is a ``DataConflict``. The owner fields are the caller's, whatever the input
    /// says. The rules allowing `create` are decided on the record as it will be stored, with the records its `via`
    /// relations lead to read in the same transaction. A `condition` must hold for the stored record, or nothing
    /// is written.
    func create(_ model: DataModel, input: [String: JSONValue], condition: JSONValue?, caller: DataCaller) async throws -> [String: any Sendable] {
        let id = try Self.clientId(input["id"])
        let owners = authorization.ownerFields(of: model)
        let write = try DataWrite.create(model, input: input, id: id, caller: caller, ownerFields: owners, schema: data, now: EpochMillis.now)
        let table = DataTables.table(app: app, model: model.name)
        let test = try conditionSQL(condition, model: model, table: table)
        let attempt = { @Sendable () async throws -> [String: any Sendable] in
            try await self.insert(model, write: write, owners: owners, table: table, test: test, caller: caller)
        }
        let outcome: [String: any Sendable]
        do {
            outcome = try await attempt()
        } catch is CreateRace {
            outcome = try await attempt()  // finds the record the other create stored
        }
        didCommit()
        return outcome
    }

    /// One try of a create, in its own transaction.
    private func insert(
        _ model: DataModel, write: DataWrite, owners: [String], table: String, test: (any SQLExpression)?, caller: DataCaller
    ) async throws -> [String: any Sendable] {
        let id = write.record["id"]?.stringValue ?? ""
        return try await database.transaction { db in
            let related = try await self.authorization.relatedRecords(of: model, record: write.record, for: .create, on: db)
            guard self.authorization.mayCreate(model, record: write.record, related: related, for: caller) else {
                throw self.refusal(.create, model: model, caller: caller)
            }
            if let existing = try await self.current(model, id: id, table: table, on: db, lock: false) {
                return try await self.retried(model, existing: existing, write: write, owners: owners, caller: caller, on: db)
            }
            let seq = try await self.appendChange(model, id: id, record: write.record, deleted: false, version: 1, on: db)
            var columns = write.orderedColumns.map { $0.name }
            var values = write.orderedColumns.map { DataWrite.bind($0.value, dialect: self.dialect) }
            columns.append(DataTables.seqColumn)
            values.append("\(bind: seq)")
            let insert: SQLQueryString = """
                INSERT INTO \(ident: table) (\(idents: columns, joinedBy: ", ")) VALUES (\(values.joined(separator: ", "))) \
                ON CONFLICT (\(ident: "id")) DO NOTHING RETURNING *
                """
            guard let row = try await db.raw(insert).first() else {
                // A concurrent create of the same id committed first: answer as a retry would, after rolling back
                // this transaction's change row.
                throw CreateRace()
            }
            if let test,
                try await db.raw("SELECT 1 AS \(ident: "hit") FROM \(ident: table) WHERE \(ident: table).\(ident: "id") = \(bind: id) AND (\(test))")
                    .first() == nil
            {
                throw KizunaError(.conditionFailed, "The condition does not hold for the new \(model.name); nothing was created.", field: "condition")
            }
            return try DataRecords.output(row, model: model)
        }
    }

    /// The answer to a create whose id exists: the stored record when it is the same create again, a conflict
    /// otherwise.
    private func retried(
        _ model: DataModel, existing: any SQLRow, write: DataWrite, owners: [String], caller: DataCaller, on db: any SQLDatabase
    ) async throws -> [String: any Sendable] {
        let stored = try DataRecords.stored(existing, model: model)
        let compared = DataWrite.writable(model, ownerFields: owners).map(\.name) + owners
        let same = stored[DataTables.deletedColumn] != .bool(true) && compared.allSatisfy { (stored[$0] ?? .null) == (write.record[$0] ?? .null) }
        if same { return try DataRecords.output(existing, model: model) }
        let current = try await readableOutput(model, row: existing, stored: stored, caller: caller, on: db)
        let id = write.record["id"]?.stringValue ?? ""
        let message =
            stored[DataTables.deletedColumn] == .bool(true)
            ? "\(model.name) \(id) was deleted; a deleted record's id is not used again."
            : "\(model.name) \(id) exists with other content; a retried create must send the same input."
        throw DataConflict(error: KizunaError(.conflict, message, field: "input.id"), current: current)
    }

    /// A create that lost a race for its id to a concurrent one; the create runs again and finds it.
    struct CreateRace: Error {}

    /// The record id a create uses: the client's, checked, or a new UUID.
    static func clientId(_ value: JSONValue?) throws(KizunaError) -> String {
        guard let value, value != .null else { return UUID().uuidString.lowercased() }
        guard case .string(let id) = value, !id.isEmpty, id.utf8.count <= 128, !id.contains(where: { $0.isNewline || $0 == "\0" }) else {
            throw KizunaError(.validationFailed, "id must be 1 to 128 bytes of text on one line, such as a UUID.", field: "input.id")
        }
        return id
    }

    // MARK: Update and delete

    /// `updateX` and `deleteX`: change a record the caller may change, in one transaction with its `changes` row.
    ///
    /// A record that does not exist, is deleted, or that the caller may neither read nor change is `not_found`, so
    /// its existence does not leak; one the caller may read but not change is `forbidden`. A `_version` in the
    /// input must be the stored one, else a ``DataConflict`` carrying the stored record; a `condition` must hold for
    /// the stored record (`condition_failed`). An update must leave a record the caller may still update (a message
    /// moved into a room the caller is not a member of is refused). A delete leaves a tombstone (`_deleted`) that
    /// sync returns until the retention passes.
    func change(
        _ model: DataModel, _ operation: DataOperation, input: [String: JSONValue], condition: JSONValue?, caller: DataCaller
    ) async throws -> [String: any Sendable] {
        guard case .string(let id)? = input["id"] else { throw KizunaError(.validationFailed, "id is required.", field: "input.id") }
        let table = DataTables.table(app: app, model: model.name)
        let test = try conditionSQL(condition, model: model, table: table)
        let expected: Int64?
        switch input["_version"] {
        case nil, .null?: expected = nil
        case .number(let number)?: expected = Int64(number)
        case let other?: throw KizunaError(.validationFailed, "_version must be a whole number, not \(other.typeName).", field: "input._version")
        }
        let owners = authorization.ownerFields(of: model)
        let outcome = try await database.transaction { db in
            let missing = KizunaError(.notFound, "No \(model.name) \(id) that this caller can see.", field: "input.id")
            guard let row = try await self.current(model, id: id, table: table, on: db, lock: true) else { throw missing }
            let stored = try DataRecords.stored(row, model: model)
            guard stored[DataTables.deletedColumn] != .bool(true) else { throw missing }
            let related = try await self.authorization.relatedRecords(of: model, record: stored, for: operation, on: db)
            guard self.authorization.allows(operation, on: model, record: stored, related: related, for: caller) else {
                let readable = try await self.mayRead(model, stored: stored, caller: caller, on: db)
                throw readable ? self.refusal(operation, model: model, caller: caller) : missing
            }
            let version = Int64(stored["_version"]?.numberValue ?? 0)
            if let expected, expected != version {
                let current = try await self.readableOutput(model, row: row, stored: stored, caller: caller, on: db)
                throw DataConflict(
                    error: KizunaError(
                        .conflict, "\(model.name) \(id) is at version \(version), not \(expected); merge with the current record and retry.",
                        field: "input._version"),
                    current: current)
            }
            if let test,
                try await db.raw("SELECT 1 AS \(ident: "hit") FROM \(ident: table) WHERE \(ident: table).\(ident: "id") = \(bind: id) AND (\(test))")
                    .first() == nil
            {
                throw KizunaError(.conditionFailed, "The condition does not hold for \(model.name) \(id); nothing was changed.", field: "condition")
            }
            var assignments: [SQLQueryString] = []
            var record = stored
            if operation == .update {
                let write = try DataWrite.update(model, input: input, current: stored, ownerFields: owners, schema: self.data)
                let moved = try await self.authorization.relatedRecords(of: model, record: write.record, for: .update, on: db)
                guard self.authorization.allows(.update, on: model, record: write.record, related: moved, for: caller) else {
                    throw KizunaError(.forbidden, "After this update the caller could not update this \(model.name) any more; nothing was changed.")
                }
                assignments = write.orderedColumns.map { "\(ident: $0.name) = \(DataWrite.bind($0.value, dialect: self.dialect))" }
                record = write.record
            } else {
                assignments.append("\(ident: DataTables.deletedColumn) = \(true)")
            }
            let now = EpochMillis.now
            record["updatedAt"] = .number(Double(now))
            record["_version"] = .number(Double(version + 1))
            record[DataTables.deletedColumn] = .bool(operation == .delete)
            let seq = try await self.appendChange(model, id: id, record: record, deleted: operation == .delete, version: version + 1, on: db)
            assignments += [
                "\(ident: "updatedAt") = \(bind: now)", "\(ident: "_version") = \(bind: version + 1)",
                "\(ident: DataTables.seqColumn) = \(bind: seq)",
            ]
            let update: SQLQueryString =
                "UPDATE \(ident: table) SET \(assignments.joined(separator: ", ")) WHERE \(ident: "id") = \(bind: id) RETURNING *"
            guard let changed = try await db.raw(update).first() else { throw missing }
            return try DataRecords.output(changed, model: model)
        }
        didCommit()
        return outcome
    }

    // MARK: Shared

    /// The stored row of `id`, tombstone or not; locked for the transaction on PostgreSQL when `lock` (SQLite's
    /// write transactions are already exclusive).
    private func current(_ model: DataModel, id: String, table: String, on db: any SQLDatabase, lock: Bool) async throws -> (any SQLRow)? {
        let forUpdate: SQLQueryString = lock && dialect == .postgres ? " FOR UPDATE" : ""
        return try await db.raw("SELECT * FROM \(ident: table) WHERE \(ident: "id") = \(bind: id)\(forUpdate)").first()
    }

    /// Whether the caller may read the stored record, decided in memory by the same rules as a query.
    private func mayRead(_ model: DataModel, stored: [String: JSONValue], caller: DataCaller, on db: any SQLDatabase) async throws -> Bool {
        let related = try await authorization.relatedRecords(of: model, record: stored, for: .read, on: db)
        return authorization.mayRead(model, record: stored, related: related, for: caller)
    }

    /// The row as the API returns it, as JSON, when the caller may read it; `nil` otherwise.
    private func readableOutput(
        _ model: DataModel, row: any SQLRow, stored: [String: JSONValue], caller: DataCaller, on db: any SQLDatabase
    ) async throws -> JSONValue? {
        guard try await mayRead(model, stored: stored, caller: caller, on: db) else { return nil }
        return DataRecords.json(output: try DataRecords.output(row, model: model))
    }

    /// A `condition` argument compiled against the model's table, or `nil` for none.
    private func conditionSQL(_ condition: JSONValue?, model: DataModel, table: String) throws(KizunaError) -> (any SQLExpression)? {
        guard let condition, condition != .null else { return nil }
        let filter = try DataFilter(condition, model: model, schema: data, table: table, dialect: dialect, argument: "condition")
        return filter.condition
    }

    /// `unauthorized` for a caller with no credential, `forbidden` for one no rule lets `operation` the model.
    func refusal(_ operation: DataOperation, model: DataModel, caller: DataCaller) -> KizunaError {
        if caller.userId == nil && !caller.hasAPIKey {
            return KizunaError(.unauthorized, "To \(operation.rawValue) \(model.name) needs a session or an API key.")
        }
        return KizunaError(.forbidden, "No rule of \(model.name) lets this caller \(operation.rawValue) it.")
    }

    /// Appends the record's `changes` row: kind `data`, the app as entity, the record's first owner field as owner,
    /// and a payload with the model, the id, whether it was deleted, the auth facts a realtime delivery decides on
    /// (the owner and owners fields, and the reference fields of `via` rules), and the record as this change left it
    /// (stored form: lists as arrays, DateTime as epoch milliseconds), so fan-out and replay need no read of the
    /// record, and a replayed change shows the record at that change, not as it is now.
    private func appendChange(
        _ model: DataModel, id: String, record: [String: JSONValue], deleted: Bool, version: Int64, on db: any SQLDatabase
    ) async throws -> Int64 {
        var facts: [String: JSONValue] = [:]
        for field in authFacts(model) { facts[field] = record[field] ?? .null }
        var stored = record
        stored[DataTables.deletedColumn] = .bool(deleted)
        let payload: JSONValue = [
            "model": .string(model.name), "id": .string(id), "deleted": .bool(deleted), "facts": .object(facts), "record": .object(stored),
        ]
        let owner = authorization.ownerFields(of: model).lazy.compactMap { record[$0]?.stringValue }.first
        return try await ChangeLog.append(
            kind: Self.changeKind, entityId: app, owner: owner, version: version, payload: StoredValue.jsonText(payload), on: db)
    }

    /// The `changes` kind of data records.
    static let changeKind = "data"

    /// The fields the rules of `model` read on a record: owner and owners fields, and the reference fields that
    /// `via` rules follow.
    func authFacts(_ model: DataModel) -> [String] {
        var fields: [String] = []
        for rule in model.rules {
            let field: String?
            if let via = rule.via {
                field = model.relation(named: via)?.references
            } else {
                switch rule.allow {
                case .owner(let name), .owners(let name): field = name
                case .groups, .signedIn, .anyone: field = nil
                }
            }
            if let field, !fields.contains(field) { fields.append(field) }
        }
        return fields
    }
}
