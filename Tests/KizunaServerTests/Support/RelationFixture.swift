import Crypto
import GraphQL
import KizunaCore
import SQLKit

@testable import KizunaServer

/// Rooms and their messages for the relation tests: tables made by the schema's own DDL, rows written with raw SQL,
/// and queries run on the data API's executable schema in the test's own task, so the statements they cost are
/// counted (``KizunaDatabase/statementCounter``).
struct RelationFixture {
    static let app = "relations"

    /// Rooms readable by their members; messages by their owner only, so a member never sees another member's
    /// messages through a room; flags by nobody (a model without rules).
    static let sdl = """
        type Room @model @auth(rules: [{ allow: owners, ownerField: "members" }]) {
          name: String
          members: [String]
          messages: [Message] @hasMany(references: ["roomId"])
        }

        type Message @model @auth(rules: [{ allow: owner }]) {
          roomId: ID! @index(name: "byRoom", sortKeyFields: ["createdAt"])
          room: Room @belongsTo(references: ["roomId"])
          text: String
          flagId: ID
          flag: Flag @belongsTo(references: ["flagId"])
        }

        type Flag @model {
          label: String
        }
        """

    /// What a query answered, and what it cost.
    struct Answer {
        var data: JSONValue
        var errors: [GraphQLError]
        /// The statements the query ran.
        var statements: Int
        /// The answer's `extensions` (filters on unindexed fields).
        var extensions: JSONValue?

        /// Each error's `code` (`graphql` for one the executor raised itself) and path, such as
        /// `forbidden at listMessages.items.0.flag`.
        var problems: [String] {
            errors.map { error in
                let code = (error.originalError as? KizunaError)?.code.rawValue ?? "graphql"
                let path = error.path.elements.map { element -> String in
                    switch element {
                    case .key(let key): return key
                    case .index(let index): return String(index)
                    }
                }
                return "\(code) at \(path.joined(separator: "."))"
            }
        }
    }

    let database: KizunaDatabase
    let runtime: DataRuntime
    let dialect: DataTables.Dialect

    /// Creates the tables in `database` through `DataTables.statements`, as publishing the schema would.
    static func make(_ database: KizunaDatabase) async throws -> RelationFixture {
        let schema = try DataSchema(sdl: sdl)
        let dialect = DataTables.Dialect(database)
        let plan = SchemaPlan(from: .empty, to: schema)
        for statement in DataTables.statements(for: plan, app: app, schema: schema, previous: .empty, dialect: dialect) {
            try await database.raw(SQLQueryString(statement)).run()
        }
        let runtime = DataRuntime(app: app, version: 1, data: schema, database: database, cursorKey: SymmetricKey(size: .bits256))
        return RelationFixture(database: database, runtime: runtime, dialect: dialect)
    }

    func table(_ model: String) -> String {
        DataTables.table(app: Self.app, model: model)
    }

    func room(_ id: String, name: String, members: [String], at millis: Int64, deleted: Bool = false) async throws {
        let list = StoredValue.jsonText(.array(members.map { JSONValue.string($0) }))
        try await database.raw(
            """
            INSERT INTO \(ident: table("Room")) ("id", "name", "members", "createdAt", "updatedAt", "_version", "_deleted", "_seq")
            VALUES (\(bind: id), \(bind: name), \(json(list)), \(bind: millis), \(bind: millis), 1, \(bind: deleted), 1)
            """
        ).run()
    }

    func message(
        _ id: String, room: String, owner: String, text: String, at millis: Int64, flag: String? = nil, deleted: Bool = false
    ) async throws {
        var flagId: any SQLExpression = SQLLiteral.null
        if let flag { flagId = SQLBind(flag) }
        try await database.raw(
            """
            INSERT INTO \(ident: table("Message")) ("id", "roomId", "text", "owner", "flagId", "createdAt", "updatedAt", "_version", "_deleted", "_seq")
            VALUES (\(bind: id), \(bind: room), \(bind: text), \(bind: owner), \(flagId), \(bind: millis), \(bind: millis), 1, \(bind: deleted), 1)
            """
        ).run()
    }

    func flag(_ id: String, label: String) async throws {
        try await database.raw(
            """
            INSERT INTO \(ident: table("Flag")) ("id", "label", "createdAt", "updatedAt", "_version", "_deleted", "_seq")
            VALUES (\(bind: id), \(bind: label), 1, 1, 1, \(bind: false), 1)
            """
        ).run()
    }

    /// Runs `query` as `caller` through the executable schema, counting the statements it runs.
    func run(_ query: String, as caller: DataCaller, variables: [String: Map] = [:]) async throws -> Answer {
        let schema = try runtime.schema()
        let counter = StatementCounter()
        let notes = RequestNotes()
        let result = try await KizunaDatabase.$statementCounter.withValue(counter) {
            try await graphql(schema: schema, request: query, context: DataRequest(caller: caller, notes: notes), variableValues: variables)
        }
        return Answer(data: DataRecords.json(result.data ?? .null), errors: result.errors, statements: counter.value, extensions: notes.extensions)
    }

    /// JSON text for a list column: TEXT on SQLite, cast for a JSONB column on PostgreSQL.
    private func json(_ text: String) -> any SQLExpression {
        if dialect == .postgres {
            let cast: SQLQueryString = "CAST(\(bind: text) AS JSONB)"
            return cast
        }
        return SQLBind(text)
    }
}
