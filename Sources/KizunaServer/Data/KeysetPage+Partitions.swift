import KizunaCore
import SQLKit

extension KeysetPage {
    /// The partitions to read a page of each of, in one statement: the records whose `key` field holds one of
    /// `values`, such as the messages of each room of a page of rooms (`key` is `roomId`).
    package struct Partitions: Sendable, Equatable {
        /// The `ID` field naming a record's partition: a relation's reference field.
        package var key: String
        /// The partitions read, by key value.
        package var values: [String]

        package init(key: String, values: [String]) {
            self.key = key
            self.values = values
        }
    }

    /// The rank of a row in its partition, a column of the ranked rows only.
    static let rankColumn = "_rank"
    /// The ranked rows, as a derived table.
    static let rankedAlias = "_pages"

    /// Builds the query of a page of each partition: every partition ordered, filtered and started after `after` as
    /// one page would be, each keeping its own `limit` rows and its own next cursor.
    ///
    /// A cursor names a position inside a partition, and all the partitions share it: paging a relation means paging
    /// it for one parent (the one whose `nextToken` it is), where it is exactly the page that follows.
    /// - Parameters:
    ///   - model: The model listed.
    ///   - schema: The app's schema.
    ///   - table: The model's table.
    ///   - dialect: The engine the SQL is for.
    ///   - partitions: The partition field and the partitions to read.
    ///   - index: An index of `model` whose partition key is `partitions.key`; its sort keys (then `id`) order each
    ///     page, and as an index query it leaves out records whose sort keys are unset. `nil` for `createdAt`, then `id`.
    ///   - descending: Whether each page runs from the highest values down.
    ///   - limit: How many rows each partition's page returns, 1 to ``maximumLimit``; ``defaultLimit`` when `nil`.
    ///   - after: The decoded `nextToken` of a previous page.
    ///   - filter: A compiled ``DataFilter`` condition, and any the access rules add.
    ///   - scope: The digest the cursors carry.
    /// - Throws: `validation_failed` for a bad limit, or an index that does not partition by `partitions.key`;
    ///   `bad_cursor` for a cursor whose values do not fit this order.
    package init(
        model: DataModel, schema: DataSchema, table: String, dialect: DataTables.Dialect, partitions: Partitions, index: String?,
        descending: Bool = false, limit: Int? = nil, after: PageCursor? = nil, filter: (any SQLExpression)? = nil, scope: String
    ) throws(KizunaError) {
        let order: Order
        if let index {
            guard model.indexes.contains(where: { $0.name == index && $0.partitionKey == partitions.key }) else {
                throw KizunaError(.validationFailed, "\(model.name) has no index \(index) on \(partitions.key).", field: "index")
            }
            order = .index(index, partition: .null)
        } else {
            order = .createdAt
        }
        try self.init(
            model: model, schema: schema, table: table, dialect: dialect, order: order, partitions: partitions, descending: descending,
            limit: limit, after: after, filter: filter, scope: scope, includeDeleted: false)
    }

    /// `SELECT * FROM (SELECT t.*, ROW_NUMBER() OVER (PARTITION BY t.key ORDER BY …) AS _rank FROM t WHERE …) AS _pages
    /// WHERE _rank <= limit + 1 ORDER BY key, _rank`: the rows of every partition ranked in the page's order, and the
    /// first `limit + 1` of each kept (the one past the limit says that a next page exists). Window functions run on
    /// SQLite from 3.25 and on every supported PostgreSQL.
    func partitionedQuery(by key: String) -> SQLQueryString {
        let ranked: SQLQueryString = "\(ident: Self.rankedAlias)"
        let rank: SQLQueryString = "\(ident: Self.rankColumn)"
        let window: SQLQueryString = "ROW_NUMBER() OVER (PARTITION BY \(ident: table).\(ident: key) ORDER BY \(orderBy))"
        let rows: SQLQueryString = "SELECT \(ident: table).*, \(window) AS \(rank) FROM \(ident: table) WHERE \(predicate)"
        let kept: SQLQueryString = "\(ranked).\(rank) <= \(literal: limit + 1)"
        return "SELECT * FROM (\(rows)) AS \(ranked) WHERE \(kept) ORDER BY \(ranked).\(ident: key), \(ranked).\(rank)"
    }

    /// Runs the query of a page of each partition (a page built with ``Partitions``).
    /// - Returns: For each partition that has rows, up to ``limit`` of them in order and the cursor after the last of
    ///   them when more rows match; a partition without rows is absent.
    /// - Throws: What the database throws.
    package func runPartitions(on database: any SQLDatabase) async throws -> [String: (rows: [any SQLRow], next: PageCursor?)] {
        guard let partitionKey else {
            throw KizunaError(.internalError, "A page of one list was run as the pages of partitions.")
        }
        var rows: [String: [any SQLRow]] = [:]
        for row in try await database.raw(query).all() {
            let partition = try row.decode(column: partitionKey, as: String.self)
            rows[partition, default: []].append(row)
        }
        return try rows.mapValues { partition in try page(of: partition) }
    }
}

extension FilterCompiler {
    /// The text `column` holds one of `values`. They are bound as one JSON array whatever their number, so a level of
    /// relations over thousands of records stays one statement, under every engine's limit on bound values.
    func isOneOf(_ column: SQLQueryString, _ values: [String]) -> SQLQueryString {
        let list = StoredValue.jsonText(.array(values.map { JSONValue.string($0) }))
        switch dialect {
        case .sqlite: return "\(column) IN (SELECT \(ident: "value") FROM json_each(\(bind: list)))"
        case .postgres: return "\(column) IN (SELECT jsonb_array_elements_text(CAST(\(bind: list) AS JSONB)))"
        }
    }
}
