import GraphQL
import KizunaCore
import OrderedCollections
import SQLKit

/// Loads the relation fields a query selects for every record of a level at once, before GraphQL resolves them.
///
/// GraphQL resolves a field once per parent record (completing list items concurrently), so a relation resolved on
/// its own would cost one statement per parent row. Instead, the resolver that loaded a level of records (`getX`,
/// `listXs`, an index query) looks ahead: it walks the field's selection set as the executor will (fragments,
/// `@skip` and `@include`, fields merged by response key), loads each selected relation for all the level's records in
/// one statement, and does the same for the related records' own selections. `listRooms { items { messages { items
/// { room { name } } } } }` costs three statements, whatever the number of rooms and messages.
///
/// Each answer is stored in its parent record under ``storageKey(_:)``, where the relation's resolver finds it. A
/// record nobody looked ahead for (a mutation's result) is loaded by the resolver as a batch of one, through the same
/// code. Nothing depends on timing (there is no DataLoader window): the statements follow from the document alone.
struct RelationLoader: Sendable {
    /// A record as resolvers pass it: field names to GraphQL values.
    typealias Record = [String: any Sendable]

    let runtime: DataRuntime
    let request: DataRequest
    /// The document's fragments, to follow spreads.
    let fragments: [String: FragmentDefinition]
    /// The request's variables, as the executor coerced them.
    let variables: [String: Map]

    init(runtime: DataRuntime, request: DataRequest, info: GraphQLResolveInfo) {
        self.runtime = runtime
        self.request = request
        fragments = info.fragments
        // The resolve info types them as Sendable; the executor holds each as a `Map`.
        variables = info.variableValues.compactMapValues { $0 as? Map }
    }

    /// Where a relation field's answer is stored in its parent record: `@` and the field's response key, which no
    /// field of a model can be named.
    static func storageKey(_ responseKey: String) -> String {
        "@" + responseKey
    }

    // MARK: Entry points

    /// `record` with the relations `fields` select loaded into it, level by level.
    /// - Parameters:
    ///   - record: A record of `model`, as ``DataRecords/output(_:model:)`` made it.
    ///   - fields: The nodes of the field that returns it (`getRoom`'s `info.fieldASTs`).
    func loaded(_ record: Record, of model: DataModel, selectedBy fields: [Field]) async -> Record {
        var records = [record]
        await prefetch(&records, of: model, selections: [fields])
        return records[0]
    }

    /// A page (`items`, `nextToken`) with the relations `fields` select on its items loaded into them.
    /// - Parameters:
    ///   - page: A page of `model`, its items as ``DataRecords/output(_:model:)`` made them.
    ///   - fields: The nodes of the field that returns it (`listRooms`'s `info.fieldASTs`).
    func loaded(page: Record, of model: DataModel, selectedBy fields: [Field]) async -> Record {
        guard var items = page["items"] as? [Record] else { return page }
        await prefetch(&items, of: model, selections: itemSelections([fields]))
        var loaded = page
        loaded["items"] = items
        return loaded
    }

    // MARK: Levels

    /// Loads every relation `selections` select on `records`, one statement per relation field, then theirs.
    /// - Parameter selections: The selections the records will be completed with, each the nodes of one response key
    ///   (the records of a connection selected as `a: items` and `b: items` have two).
    func prefetch(_ records: inout [Record], of model: DataModel, selections: [[Field]]) async {
        guard !records.isEmpty, !model.relations.isEmpty else { return }
        for (key, planned) in plan(selections, on: model) where planned.isAgreed {
            await load(planned.relation, key: key, field: planned.field, selections: planned.selections, into: &records, of: model)
        }
    }

    /// Loads the relation field under the response key `key` for all `records` in one statement, with what
    /// `selections` select on the related records, and stores each record's answer under ``storageKey(_:)``. What
    /// stops the field (the caller may not read the related model, a bad argument, a failed read) is stored as the
    /// answer of each record it stops, so it is that field's error, never the whole list's.
    /// - Parameters:
    ///   - relation: The relation of `model`.
    ///   - key: The field's response key.
    ///   - field: The field's first node, whose arguments the executor uses.
    ///   - selections: The field's nodes, once per selection the records are completed with.
    ///   - records: Records of `model`.
    func load(_ relation: DataRelation, key: String, field: Field, selections: [[Field]], into records: inout [Record], of model: DataModel) async {
        let answers: [RelationAnswer]
        do {
            answers = try await fetch(relation, of: model, field: field, selections: selections, for: records)
        } catch {
            answers = Array(repeating: RelationAnswer.failed(error), count: records.count)
        }
        let stored = Self.storageKey(key)
        for index in records.indices { records[index][stored] = answers[index] }
    }

    /// Each record's answer for `relation`, in the records' order.
    private func fetch(
        _ relation: DataRelation, of model: DataModel, field: Field, selections: [[Field]], for records: [Record]
    ) async throws -> [RelationAnswer] {
        guard let target = runtime.data.model(named: relation.target) else {
            throw KizunaError(.internalError, "\(model.name).\(relation.field) leads to \(relation.target), which is not a model.")
        }
        switch relation.kind {
        case .belongsTo:
            return try await belongsTo(relation, target: target, selections: selections, for: records)
        case .hasMany:
            return try await hasMany(relation, of: model, target: target, field: field, selections: selections, for: records)
        }
    }

    /// `SELECT * FROM <target> WHERE id IN (…) AND NOT deleted AND <what the caller may read>`: each record's related
    /// record, or `nil` when it references none, or one that is missing, deleted or not the caller's to read (which
    /// look the same, as `getX` answers them).
    private func belongsTo(
        _ relation: DataRelation, target: DataModel, selections: [[Field]], for records: [Record]
    ) async throws -> [RelationAnswer] {
        let references = records.map { $0[relation.references] as? String }
        let ids = Self.unique(references.compactMap { $0 })
        guard !ids.isEmpty else { return Array(repeating: RelationAnswer.loaded(nil), count: records.count) }
        let access: DataAccess
        do {
            access = try runtime.readable(target, caller: request.caller)
        } catch {
            // A record that references nothing has nothing to hide: only the references the caller cannot follow fail.
            return references.map { reference -> RelationAnswer in reference == nil ? .loaded(nil) : .failed(error) }
        }
        let table = DataTables.table(app: runtime.app, model: target.name)
        let compiler = FilterCompiler(model: target, schema: runtime.data, table: table, dialect: runtime.dialect)
        var conditions: [SQLQueryString] = [
            compiler.isOneOf(compiler.column("id"), ids), "\(compiler.column(DataTables.deletedColumn)) = \(false)",
        ]
        if case .rows(let condition) = access { conditions.append("(\(condition))") }
        let predicate = conditions.joined(separator: " AND ")
        let rows = try await runtime.database.raw("SELECT * FROM \(ident: table) WHERE \(predicate)").all()
        var related = try rows.map { try DataRecords.output($0, model: target) }
        await prefetch(&related, of: target, selections: selections)
        var byId: [String: Record] = [:]
        for record in related {
            if let id = record["id"] as? String { byId[id] = record }
        }
        return references.map { id -> RelationAnswer in
            guard let id, let record = byId[id] else { return .loaded(nil) }
            return .loaded(record)
        }
    }

    /// A page of each record's related records (`filter`, `sortDirection`, `limit`, `nextToken` as a list takes
    /// them), all read by one windowed statement (``KeysetPage/Partitions``), each page with its own `nextToken`.
    ///
    /// The order is the target's index on the reference field when it has one (its sort keys, as Amplify's
    /// `@hasMany(indexName:)` reads it), else `createdAt`; then `id`. A cursor's scope is the filter and the relation,
    /// so a token of `listMessages` or of another relation is `bad_cursor` here.
    private func hasMany(
        _ relation: DataRelation, of model: DataModel, target: DataModel, field: Field, selections: [[Field]], for records: [Record]
    ) async throws -> [RelationAnswer] {
        let table = DataTables.table(app: runtime.app, model: target.name)
        let args = DataRecords.json(arguments(of: field))
        let filter = try DataFilter(args["filter"], model: target, schema: runtime.data, table: table, dialect: runtime.dialect)
        if !filter.unindexedFields.isEmpty { request.notes.unindexed(model: target.name, fields: filter.unindexedFields) }
        var conditions: [SQLQueryString] = []
        if let condition = filter.condition { conditions.append("(\(condition))") }
        if case .rows(let condition) = try runtime.readable(target, caller: request.caller) { conditions.append("(\(condition))") }
        let index = target.indexes.first { $0.partitionKey == relation.references }
        let descending = args["sortDirection"] == .string("DESC")
        let scope = PageCursor.scope(of: .object(["filter": args["filter"] ?? .null, "relation": .string("\(model.name).\(relation.field)")]))
        let after: PageCursor? =
            if case .string(let token)? = args["nextToken"] {
                try PageCursor.decode(token, key: runtime.cursorKey, expecting: (target.name, index?.name ?? "", descending, scope))
            } else {
                nil
            }
        let parents = records.map { $0["id"] as? String }
        let partitions = KeysetPage.Partitions(key: relation.references, values: Self.unique(parents.compactMap { $0 }))
        let page = try KeysetPage(
            model: target, schema: runtime.data, table: table, dialect: runtime.dialect, partitions: partitions, index: index?.name,
            descending: descending, limit: args["limit"]?.numberValue.map { Int($0) }, after: after,
            filter: conditions.isEmpty ? nil : conditions.joined(separator: " AND "), scope: scope)
        var pages: [String: (rows: [any SQLRow], next: PageCursor?)] = [:]
        if !partitions.values.isEmpty { pages = try await page.runPartitions(on: runtime.database) }

        // Every parent's items in one list, so the next level is loaded once for all of them.
        var items: [Record] = []
        var ranges: [String: Range<Int>] = [:]
        for parent in partitions.values {
            let start = items.count
            for row in pages[parent]?.rows ?? [] { items.append(try DataRecords.output(row, model: target)) }
            ranges[parent] = start..<items.count
        }
        await prefetch(&items, of: target, selections: itemSelections(selections))
        return parents.map { parent -> RelationAnswer in
            let range = parent.flatMap { ranges[$0] } ?? (0..<0)
            let next = parent.flatMap { pages[$0]?.next }
            let connection: Record = [
                "items": Array(items[range]), "nextToken": next.map { $0.encoded(key: runtime.cursorKey) } as (any Sendable)?,
            ]
            return .loaded(connection)
        }
    }

    /// `values` without repeats, in the order first seen, so a statement's values do not depend on hashing.
    static func unique(_ values: [String]) -> [String] {
        var seen: Set<String> = []
        return values.filter { seen.insert($0).inserted }
    }
}

/// A relation field's answer for one parent record, as stored in the record.
enum RelationAnswer: Sendable {
    /// The related record (`belongsTo`; `nil` for none the caller may read) or page (`hasMany`).
    case loaded((any Sendable)?)
    /// What stopped the field for this record: the caller may not read the related model, a bad argument, a failed
    /// read.
    case failed(any Error)

    /// The answer, or its error.
    func get() throws -> (any Sendable)? {
        switch self {
        case .loaded(let value): return value
        case .failed(let error): throw error
        }
    }
}

extension DataRuntime {
    /// The resolver of a relation field: the answer the look-ahead stored in the parent record or, for a record
    /// loaded without one (a mutation's result; a field the look-ahead left to its resolvers), the same load for that
    /// record alone.
    func relationResolver(_ model: DataModel, _ relation: DataRelation) -> GraphQLFieldResolve {
        { source, _, context, info in
            guard let record = source as? RelationLoader.Record, let field = info.fieldASTs.first else { return nil }
            let key = field.alias?.value ?? field.name.value
            let stored = RelationLoader.storageKey(key)
            if let answer = record[stored] as? RelationAnswer { return try answer.get() }
            let loader = RelationLoader(runtime: self, request: try DataRequest.from(context), info: info)
            var records = [record]
            await loader.load(relation, key: key, field: field, selections: [info.fieldASTs], into: &records, of: model)
            guard let answer = records[0][stored] as? RelationAnswer else { return nil }
            return try answer.get()
        }
    }
}
