import Crypto
import Foundation
import GraphQL
import KizunaCore
import OrderedCollections
import SQLKit
import Synchronization

/// One app's data API at one schema version: the executable GraphQL schema with its resolvers, over the app's
/// tables, every read narrowed by the one rule engine.
///
/// Queries (`getX`, `listXs`, `listXsBy<Index>`, `syncXs`) and mutations (`createX`, `updateX`, `deleteX`) are
/// served here and in its extensions, with the relation fields they select (`@belongsTo`, `@hasMany`) loaded one
/// statement per level by ``RelationLoader``; every read is narrowed in SQL, every write decided in memory on the
/// record, by the same rules.
final class DataRuntime: Sendable {
    let app: String
    let version: Int64
    let data: DataSchema
    let authorization: DataAuthorization
    let database: KizunaDatabase
    let cursorKey: SymmetricKey
    /// How long deleted records are kept as tombstones, in milliseconds: a sync from further back is refused.
    let tombstoneRetention: Int64
    /// Told after a mutation commits, so this process's change feed reads it at once.
    let didCommit: @Sendable () -> Void
    let dialect: DataTables.Dialect
    /// The documents requests sent, parsed and validated against this schema.
    let documents = DocumentCache()
    /// Subscriptions parsed on this schema, by document, operation name and variables (``SubscriptionRequest/key``).
    let subscriptionRequests = TextCache<SubscriptionRequest>()
    /// The plans of the documents that need no executor (``FastQuery``).
    let plans = FastQueryPlans()
    /// What subscription deliveries share across connections: decoded changes and payloads.
    let deliveries = DeliveryCache()
    private let built = Mutex<ClientSchema?>(nil)

    /// The default ``tombstoneRetention``: 30 days.
    static let defaultTombstoneRetention: Int64 = 30 * 86_400_000

    init(
        app: String, version: Int64, data: DataSchema, database: KizunaDatabase, cursorKey: SymmetricKey,
        tombstoneRetention: Int64 = DataRuntime.defaultTombstoneRetention, didCommit: @escaping @Sendable () -> Void = {}
    ) {
        self.app = app
        self.version = version
        self.data = data
        self.database = database
        self.cursorKey = cursorKey
        self.tombstoneRetention = tombstoneRetention
        self.didCommit = didCommit
        dialect = database.engine == .postgres ? .postgres : .sqlite
        authorization = DataAuthorization(schema: data, app: app, dialect: dialect)
        usesGroups = data.models.contains { model in
            model.rules.contains { if case .groups = $0.allow { true } else { false } }
        }
    }

    /// Whether any rule admits by group, so requests need the caller's groups.
    let usesGroups: Bool

    /// The executable schema, built once.
    func schema() throws -> GraphQLSchema {
        if let schema = built.withLock({ $0?.schema }) { return schema }
        let client = try ClientSchema(data, resolvers: self)
        built.withLock { $0 = client }
        return client.schema
    }

    // MARK: Resolvers

    /// The resolver of `getX`, which loads the relations the query selects on the record.
    func getResolver(_ model: DataModel) -> GraphQLFieldResolve {
        { _, args, context, info in
            let request = try DataRequest.from(context)
            let id = DataRecords.json(args)["id"]?.stringValue ?? ""
            guard let record = try await self.get(model, id: id, caller: request.caller) else { return nil }
            return await RelationLoader(runtime: self, request: request, info: info).loaded(record, of: model, selectedBy: info.fieldASTs)
        }
    }

    /// The resolver of `listXs` (no index) or of an index query, which loads the relations the query selects on the
    /// page's items.
    func listResolver(_ model: DataModel, index: DataIndex?) -> GraphQLFieldResolve {
        { _, args, context, info in
            let request = try DataRequest.from(context)
            let page = try await self.list(model, index: index, arguments: args, caller: request.caller, notes: request.notes)
            return await RelationLoader(runtime: self, request: request, info: info).loaded(page: page, of: model, selectedBy: info.fieldASTs)
        }
    }

    /// `getX(id)`: the record when it exists, is not deleted and the caller may read it; `null` otherwise, so a
    /// record the caller may not read is indistinguishable from one that does not exist.
    func get(_ model: DataModel, id: String, caller: DataCaller) async throws -> [String: any Sendable]? {
        let table = DataTables.table(app: app, model: model.name)
        let access = try readable(model, caller: caller)
        var conditions: [SQLQueryString] = [
            "\(ident: table).\(ident: "id") = \(bind: id)", "\(ident: table).\(ident: DataTables.deletedColumn) = \(bind: false)",
        ]
        if case .rows(let condition) = access { conditions.append("(\(condition))") }
        let predicate = conditions.joined(separator: " AND ")
        guard let row = try await database.raw("SELECT * FROM \(ident: table) WHERE \(predicate)").first() else { return nil }
        return try DataRecords.output(row, model: model)
    }

    /// `listXs` and the index queries: one keyset page of what the filter matches among what the caller may read.
    func list(_ model: DataModel, index: DataIndex?, arguments: Map, caller: DataCaller, notes: RequestNotes) async throws -> [String: any Sendable] {
        let table = DataTables.table(app: app, model: model.name)
        let args = DataRecords.json(arguments)
        let filter = try DataFilter(args["filter"], model: model, schema: data, table: table, dialect: dialect)
        if !filter.unindexedFields.isEmpty { notes.unindexed(model: model.name, fields: filter.unindexedFields) }
        var conditions: [SQLQueryString] = []
        if let condition = filter.condition { conditions.append("(\(condition))") }
        if case .rows(let condition) = try readable(model, caller: caller) { conditions.append("(\(condition))") }
        let order: KeysetPage.Order
        var scope: [String: JSONValue] = ["filter": args["filter"] ?? .null]
        if let index {
            let partition = args[index.partitionKey] ?? .null
            let sortKey = index.sortKeys.first.flatMap { args[$0] }
            order = .index(index.name, partition: partition, sortKey: sortKey)
            scope["partition"] = partition
            scope["sortKey"] = sortKey ?? .null
        } else {
            order = .createdAt
        }
        let descending = args["sortDirection"] == .string("DESC")
        let scopeDigest = PageCursor.scope(of: .object(scope))
        let after: PageCursor? =
            if case .string(let token)? = args["nextToken"] {
                try PageCursor.decode(
                    token, key: cursorKey, expecting: (model.name, index?.name ?? "", descending, scopeDigest))
            } else {
                nil
            }
        let limit = args["limit"]?.numberValue.map { Int($0) }
        let page = try KeysetPage(
            model: model, schema: data, table: table, dialect: dialect, order: order, descending: descending, limit: limit, after: after,
            filter: conditions.isEmpty ? nil : conditions.joined(separator: " AND "), scope: scopeDigest)
        let (rows, next) = try await page.run(on: database)
        let items = try rows.map { try DataRecords.output($0, model: model) }
        return ["items": items, "nextToken": next.map { $0.encoded(key: cursorKey) } as (any Sendable)?]
    }

    /// The rule engine's answer for reads, or `unauthorized`/`forbidden` when no rule lets the caller read at all.
    func readable(_ model: DataModel, caller: DataCaller) throws(KizunaError) -> DataAccess {
        let access = authorization.access(.read, on: model, for: caller)
        if case .denied = access {
            if caller.userId == nil && !caller.hasAPIKey {
                throw KizunaError(.unauthorized, "Reading \(model.name) needs a session or an API key.")
            }
            throw KizunaError(.forbidden, "No rule of \(model.name) lets this caller read it.")
        }
        return access
    }
}

/// What a request learned while it ran, for the answer's `extensions`.
final class RequestNotes: Sendable {
    private let fields = Mutex<[String: Set<String>]>([:])

    /// A filter tested fields no index leads with: it works, and the answer says it scanned.
    func unindexed(model: String, fields tested: [String]) {
        fields.withLock { $0[model, default: []].formUnion(tested) }
    }

    /// `{"unindexedFilter": {"Message": ["text"]}}`, or nothing.
    var extensions: JSONValue? {
        let recorded = fields.withLock { $0 }
        guard !recorded.isEmpty else { return nil }
        return .object(["unindexedFilter": .object(recorded.mapValues { .array($0.sorted().map(JSONValue.string)) })])
    }
}
