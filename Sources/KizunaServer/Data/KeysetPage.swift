import KizunaCore
import SQLKit

/// One page of a model's records, read by keyset: `WHERE (sort values) > (the cursor's)`, `ORDER BY` the sort
/// columns, `LIMIT limit + 1`.
///
/// A page costs an index range however deep the list goes (an offset would read every row before it), and rows
/// written between two requests never shift a page: each page starts strictly after the last row the previous one
/// returned. `limit` counts rows returned, never rows scanned: the filter runs inside the same query, so a filter
/// that matches few rows still fills the page, and `next` is `nil` exactly when no matching row is left.
///
/// The order is `createdAt`, then `id` by default, or an index's: its partition key fixed by equality, then its sort
/// keys, then `id`; `id` breaks ties, so rows created in the same millisecond still have one order. An index query
/// leaves out rows whose sort keys are unset, as a DynamoDB index does (sparse indexes are how Amplify apps list
/// "only the pinned ones").
///
/// The same predicate and order also read a page of each of several partitions in one statement (``Partitions``):
/// how a `hasMany` relation loads the related records of every parent at once.
package struct KeysetPage: Sendable {
    /// Which order a list follows.
    package enum Order: Sendable {
        /// `createdAt`, then `id`.
        case createdAt
        /// The index `name`: records whose partition key is `partition`, by sort keys then `id`. `sortKey` is a
        /// condition on the first sort key, in the key-condition grammar (`eq`, `le`, `lt`, `ge`, `gt`,
        /// `between`, `beginsWith`).
        case index(String, partition: JSONValue, sortKey: JSONValue? = nil)
    }

    /// The most a page may hold, and what it holds when the query does not say.
    package static let maximumLimit = 1000
    package static let defaultLimit = 100

    /// The model listed.
    package let model: DataModel
    /// Its table.
    package let table: String
    /// The index name, or `""` for the default order: what a cursor records.
    package let orderName: String
    /// The columns rows are ordered by, most significant first, ending with `id`; the cursor holds their values.
    package let order: [DataField]
    /// Whether the list runs from the highest values down.
    package let descending: Bool
    /// The most rows a page returns.
    package let limit: Int
    /// Where the page starts; `nil` for the first page.
    package let after: PageCursor?
    /// The digest the next cursor carries (``PageCursor/scope(of:)`` of the filter and key arguments).
    package let scope: String
    /// What a row on the page satisfies, its columns qualified with the table's name: not deleted (unless tombstones
    /// are listed), in the partition or partitions, in the index (a sparse one), the key condition, the filter, and
    /// strictly after the cursor.
    package let predicate: SQLQueryString
    /// The `ORDER BY` terms, qualified: the index's partition key and sort keys (or `createdAt`), then `id`.
    package let orderBy: SQLQueryString
    /// For the pages of several partitions read at once (a `hasMany` relation's, see ``Partitions``), the field whose
    /// values name them; `nil` for one page.
    package let partitionKey: String?

    /// The SELECT, with its values bound.
    package var query: SQLQueryString {
        if let partitionKey { return partitionedQuery(by: partitionKey) }
        return "SELECT * FROM \(ident: table) WHERE \(predicate) ORDER BY \(orderBy) LIMIT \(literal: limit + 1)"
    }

    /// Builds a page's query.
    /// - Parameters:
    ///   - model: The model listed.
    ///   - schema: The app's schema (for enum values in key conditions).
    ///   - table: The model's table.
    ///   - dialect: The engine the SQL is for.
    ///   - order: The default order, or an index with its partition value and sort-key condition.
    ///   - descending: Whether to list from the highest values down.
    ///   - limit: How many rows a page returns, 1 to ``maximumLimit``; ``defaultLimit`` when `nil`.
    ///   - after: The decoded `nextToken` of the previous page (``PageCursor/decode(_:key:expecting:)`` with this
    ///     model, ``orderName``, direction and scope).
    ///   - filter: A compiled ``DataFilter`` condition, and any the access rules add.
    ///   - scope: The digest of the filter and key arguments.
    ///   - includeDeleted: Whether tombstones are listed too (sync reads them; lists do not).
    /// - Throws: `limit_exceeded` for a limit over ``maximumLimit``; `validation_failed` for one under 1, an unknown index, or a partition value or key condition that
    ///   does not fit its field; `bad_cursor` for a cursor whose values do not fit this order.
    package init(
        model: DataModel, schema: DataSchema, table: String, dialect: DataTables.Dialect, order: Order = .createdAt, descending: Bool = false,
        limit: Int? = nil, after: PageCursor? = nil, filter: (any SQLExpression)? = nil, scope: String, includeDeleted: Bool = false
    ) throws(KizunaError) {
        try self.init(
            model: model, schema: schema, table: table, dialect: dialect, order: order, partitions: nil, descending: descending, limit: limit,
            after: after, filter: filter, scope: scope, includeDeleted: includeDeleted)
    }

    /// The one builder of both kinds of pages: one list, or with `partitions` a page of each partition (then an
    /// `.index` order's partition value is not read: the partitions say which rows are read).
    init(
        model: DataModel, schema: DataSchema, table: String, dialect: DataTables.Dialect, order: Order, partitions: Partitions?, descending: Bool,
        limit: Int?, after: PageCursor?, filter: (any SQLExpression)?, scope: String, includeDeleted: Bool
    ) throws(KizunaError) {
        let pageLimit = limit ?? Self.defaultLimit
        guard pageLimit >= 1 else {
            throw KizunaError(.validationFailed, "limit must be between 1 and \(Self.maximumLimit); it was \(pageLimit).", field: "limit")
        }
        guard pageLimit <= Self.maximumLimit else {
            // The data API refuses such a page before anything runs (GraphQLLimits, limit "pageSize"); this says the same.
            throw KizunaError(
                .limitExceeded, "limit may be at most \(Self.maximumLimit) (the page size limit); it was \(pageLimit). Page with nextToken.",
                field: "limit")
        }
        var compiler = FilterCompiler(model: model, schema: schema, table: table, dialect: dialect)
        var conditions: [SQLQueryString] = []
        if !includeDeleted { conditions.append("\(compiler.column(DataTables.deletedColumn)) = \(false)") }
        var columns: [DataField] = [.createdAt]
        var orderName = ""
        var ordered: [String] = []  // the columns of ORDER BY: the partition key too, so the index's order is plain
        if case .index(let name, let partition, let sortKey) = order {
            guard let index = model.indexes.first(where: { $0.name == name }) else {
                let known = model.indexes.map(\.name).joined(separator: ", ")
                throw KizunaError(.validationFailed, "\(model.name) has no index \(name); its indexes are: \(known).", field: "index")
            }
            orderName = name
            columns = index.sortKeys.compactMap { model.field(named: $0) }
            if partitions == nil, let key = model.field(named: index.partitionKey),
                let value = compiler.stored(partition, of: key, at: FilterPath(key.name))
            {
                conditions.append("\(compiler.column(key.name)) = \(bind: value.bindable)")
            }
            ordered.append(index.partitionKey)
            // A sparse index: a row without a sort key is not in it.
            for field in columns { conditions.append("\(compiler.column(field.name)) IS NOT NULL") }
            if let sortKey, sortKey != .null {
                if let first = columns.first {
                    if let condition = compiler.keyCondition(sortKey, on: first, at: FilterPath(first.name)) { conditions.append(condition) }
                } else {
                    compiler.problem(FilterPath("sortKey"), "\(name) has no sort key to put a condition on", code: "unsupported_operator")
                }
            }
        }
        try compiler.throwIfFailed(field: nil, summary: "The index query's key arguments are not valid")
        if let partitions {
            conditions.append(compiler.isOneOf(compiler.column(partitions.key), partitions.values))
        }
        columns.append(.id)
        ordered += columns.map(\.name)
        if let filter { conditions.append("(\(filter))") }
        if let after {
            let values = try Self.values(of: after, for: columns)
            conditions.append(Self.keysetCondition(values, columns: columns, descending: descending, compiler: compiler))
        }

        let direction = descending ? "DESC" : "ASC"
        self.orderBy = ordered.map { "\(compiler.column($0)) \(unsafeRaw: direction)" as SQLQueryString }.joined(separator: ", ")
        self.predicate = conditions.isEmpty ? "\(true)" : conditions.joined(separator: " AND ")
        self.partitionKey = partitions?.key
        self.model = model
        self.table = table
        self.orderName = orderName
        self.order = columns
        self.descending = descending
        self.limit = pageLimit
        self.after = after
        self.scope = scope
    }

    /// Runs the query.
    /// - Returns: Up to ``limit`` rows, and the cursor after the last of them when more rows match.
    package func run(on database: any SQLDatabase) async throws -> (rows: [any SQLRow], next: PageCursor?) {
        try page(of: try await database.raw(query).all())
    }

    /// `rows` (a page's, in order, up to one past the limit) cut to ``limit``, with the cursor after the last when
    /// the one row past the limit says that a next page exists.
    func page(of rows: [any SQLRow]) throws -> (rows: [any SQLRow], next: PageCursor?) {
        guard rows.count > limit else { return (rows, nil) }
        let kept = Array(rows.prefix(limit))
        let after = try order.map { field in try Self.cursorValue(of: field, in: kept[kept.count - 1]) }
        return (kept, PageCursor(model: model.name, order: orderName, descending: descending, scope: scope, after: after))
    }

    /// `(c1 > v1) OR (c1 = v1 AND c2 > v2) OR …` (`<` when descending): the rows strictly after the cursor. Written
    /// out rather than as a row comparison `(c1, c2) > (v1, v2)`, which SQLite and PostgreSQL both accept but not
    /// every planner turns into an index range.
    private static func keysetCondition(_ values: [StoredValue], columns: [DataField], descending: Bool, compiler: FilterCompiler) -> SQLQueryString {
        let beyond = descending ? "<" : ">"
        var alternatives: [SQLQueryString] = []
        for position in columns.indices {
            var terms: [SQLQueryString] = []
            for earlier in 0..<position {
                terms.append("\(compiler.column(columns[earlier].name)) = \(bind: values[earlier].bindable)")
            }
            terms.append("\(compiler.column(columns[position].name)) \(unsafeRaw: beyond) \(bind: values[position].bindable)")
            let conjunction = terms.joined(separator: " AND ")
            alternatives.append("(\(conjunction))")
        }
        let disjunction = alternatives.joined(separator: " OR ")
        return "(\(disjunction))"
    }

    /// The cursor's values as stored values of `columns`; `bad_cursor` when they do not fit (the index changed
    /// since the token was issued, say).
    private static func values(of cursor: PageCursor, for columns: [DataField]) throws(KizunaError) -> [StoredValue] {
        let mismatch = KizunaError(
            .badCursor, "The nextToken no longer fits this list's order (the schema changed); list again without it.", field: "nextToken")
        guard cursor.after.count == columns.count else { throw mismatch }
        var values: [StoredValue] = []
        for (field, value) in zip(columns, cursor.after) {
            switch (field.type, value) {
            case (.scalar(.int), .string(let text)), (.scalar(.dateTime), .string(let text)):
                guard let integer = Int64(text) else { throw mismatch }
                values.append(.integer(integer))
            case (.scalar(.float), .number(let number)): values.append(.real(number))
            case (.scalar(.boolean), .bool(let flag)): values.append(.bool(flag))
            case (.scalar(.id), .string(let text)), (.scalar(.string), .string(let text)), (.enumeration, .string(let text)):
                values.append(.text(text))
            default: throw mismatch
            }
        }
        return values
    }

    /// The value of the sort column `field` in `row`, as a cursor records it.
    private static func cursorValue(of field: DataField, in row: any SQLRow) throws -> JSONValue {
        switch field.type {
        case .scalar(.int), .scalar(.dateTime): return try .string(String(row.decode(column: field.name, as: Int64.self)))
        case .scalar(.float): return try .number(row.decode(column: field.name, as: Double.self))
        case .scalar(.boolean): return try .bool(row.decode(column: field.name, as: Bool.self))
        case .scalar(.id), .scalar(.string), .scalar(.json), .enumeration: return try .string(row.decode(column: field.name, as: String.self))
        }
    }
}

extension FilterCompiler {
    /// A key condition on an index's first sort key: one of `eq`, `le`, `lt`, `ge`, `gt`, `between`, `beginsWith`,
    /// as Amplify's `ModelStringKeyConditionInput` has them. `nil` after recording a problem.
    mutating func keyCondition(_ value: JSONValue, on field: DataField, at path: FilterPath) -> SQLQueryString? {
        let allowed: [FilterOperator] = [.eq, .le, .lt, .ge, .gt, .between, .beginsWith]
        guard case .object(let members) = value, members.count == 1, let member = members.first else {
            problem(path, "must be an object with one of \(allowed.map(\.rawValue).joined(separator: ", "))", code: "wrong_type")
            return nil
        }
        guard let op = FilterOperator(rawValue: member.key), allowed.contains(op) else {
            problem(
                path[member.key], "is not a key condition; expected one of \(allowed.map(\.rawValue).joined(separator: ", "))",
                code: "unknown_operator")
            return nil
        }
        guard let node = condition(op, member.value, on: field, at: path[member.key]) else { return nil }
        return sql(node)
    }
}
