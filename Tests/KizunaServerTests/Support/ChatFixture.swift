import KizunaCore
import SQLKit
import Testing

@testable import KizunaServer

/// A chat app's schema with every kind of access rule, its tables made by the schema's own DDL, and rows written
/// with raw SQL: what the authorization tests read.
struct ChatFixture {
    static let app = "chat"

    static let sdl = #"""
        type Room @model @auth(rules: [
          {allow: owners, ownerField: "members"},
          {allow: groups, groups: ["moderators"]}
        ]) {
          name: String
          members: [String]
          messages: [Message] @hasMany(references: ["roomId"])
        }

        type Message @model @auth(rules: [
          {allow: owners, ownerField: "members", via: "room", operations: [read, create]},
          {allow: owner, operations: [read, update, delete]}
        ]) {
          roomId: ID!
          room: Room @belongsTo(references: ["roomId"])
          text: String
        }

        type Note @model @auth(rules: [{allow: owner}]) {
          text: String
        }

        type Notice @model @auth(rules: [
          {allow: public, operations: [read]},
          {allow: private, operations: [read]},
          {allow: groups, groups: ["admins"]}
        ]) {
          text: String
        }

        type Secret @model {
          text: String
        }
        """#

    /// One row to insert: the model and its stored fields (with `id`; a list as a JSON array), exactly what the
    /// in-memory decision is given, so both sides judge the same record.
    struct Row: Sendable {
        var model: String
        var fields: [String: JSONValue]
        var deleted = false
    }

    let database: KizunaDatabase
    let schema: DataSchema
    let dialect: DataTables.Dialect
    let authorization: DataAuthorization

    /// Creates the chat tables in `database` through `DataTables.statements`, as publishing the schema would.
    static func make(_ database: KizunaDatabase) async throws -> ChatFixture {
        let schema = try DataSchema(sdl: sdl)
        let dialect = DataTables.Dialect(database)
        let plan = SchemaPlan(from: .empty, to: schema)
        for statement in DataTables.statements(for: plan, app: app, schema: schema, previous: .empty, dialect: dialect) {
            try await database.raw(SQLQueryString(statement)).run()
        }
        let authorization = DataAuthorization(schema: schema, app: app, dialect: dialect)
        return ChatFixture(database: database, schema: schema, dialect: dialect, authorization: authorization)
    }

    func model(_ name: String) throws -> DataModel {
        try #require(schema.model(named: name))
    }

    func table(_ model: String) -> String {
        DataTables.table(app: Self.app, model: model)
    }

    /// Inserts `rows` with raw SQL, values bound; automatic fields the row leaves out get fixed values.
    func insert(_ rows: [Row]) async throws {
        for row in rows {
            let model = try self.model(row.model)
            var columns: [String] = []
            var values: [any SQLExpression] = []
            for field in model.fields {
                columns.append(field.name)
                let value = row.fields[field.name] ?? .null
                if value != .null, field.isList {
                    values.append(json(StoredValue.jsonText(value)))
                } else if value != .null {
                    let text = try #require(value.stringValue, "the fixture's non-list fields are strings")
                    values.append(SQLBind(text))
                } else if field.name == "createdAt" || field.name == "updatedAt" || field.name == "_version" {
                    values.append(SQLBind(Int64(1_000)))
                } else {
                    values.append(SQLLiteral.null)
                }
            }
            columns += [DataTables.deletedColumn, DataTables.seqColumn]
            values += [SQLBind(row.deleted), SQLBind(Int64(1))]
            try await database.raw("INSERT INTO \(ident: table(row.model)) (\(idents: columns, joinedBy: ", ")) VALUES (\(SQLList(values)))").run()
        }
    }

    /// Sets a room's members, as an update would.
    func setMembers(of room: String, to members: [String]) async throws {
        let list = StoredValue.jsonText(.array(members.map { JSONValue.string($0) }))
        let rooms = table("Room")
        try await database.raw("UPDATE \(ident: rooms) SET \(ident: "members") = \(json(list)) WHERE \(ident: "id") = \(bind: room)").run()
    }

    /// The ids of `model`'s rows (deleted ones too) that `access` lets through, in id order; `nil` when denied.
    func ids(_ model: String, _ access: DataAccess) async throws -> [String]? {
        let condition: any SQLExpression
        switch access {
        case .denied: return nil
        case .all: condition = SQLLiteral.boolean(true)
        case .rows(let rows): condition = rows
        }
        let rows = try await database.raw("SELECT \(ident: "id") FROM \(ident: table(model)) WHERE \(condition) ORDER BY \(ident: "id")").all()
        return try rows.map { try $0.decode(column: "id", as: String.self) }
    }

    /// The ids of `model`'s rows `caller` may `operation` by the SQL condition; `nil` when denied outright.
    func ids(_ operation: DataOperation, _ name: String, for caller: DataCaller) async throws -> [String]? {
        let model = try self.model(name)
        let access = authorization.access(operation, on: model, for: caller)
        return try await ids(name, access)
    }

    /// Whether `caller` may create `fields` as a `model`, with the related records loaded as the API would.
    func mayCreate(_ name: String, _ fields: [String: JSONValue], for caller: DataCaller) async throws -> Bool {
        let model = try self.model(name)
        let related = try await authorization.relatedRecords(of: model, record: fields, for: .create, on: database)
        return authorization.mayCreate(model, record: fields, related: related, for: caller)
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
