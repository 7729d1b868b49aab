import KizunaCore
import SQLKit
import Testing

@testable import KizunaServer

/// A model with a field of every type and two indexes, its table made by the schema's own DDL, and rows written with
/// raw SQL: what the query tests read.
struct NotesFixture {
    static let sdl = """
        enum Mood {
          HAPPY
          SAD
          CALM
        }

        type Note @model @auth(rules: [{ allow: public }]) {
          roomId: ID! @index(name: "byRoom", sortKeyFields: ["title"])
          title: String
          likes: Int
          score: Float
          done: Boolean
          dueAt: DateTime
          mood: Mood @index(name: "byMood", sortKeyFields: ["likes"])
          tags: [String]
          sizes: [Int]
          meta: JSON
        }
        """

    /// One row; `nil` leaves a field unset. Lists and JSON are JSON text, as the table holds them.
    struct Note: Sendable {
        var id: String
        var roomId = "r1"
        var title: String?
        var likes: Int64?
        var score: Double?
        var done: Bool?
        var dueAt: Int64?
        var mood: String?
        var tags: String?
        var sizes: String?
        var meta: String?
        var createdAt: Int64 = 1_000
        var deleted = false
    }

    let database: KizunaDatabase
    let schema: DataSchema
    let model: DataModel
    let table: String
    let dialect: DataTables.Dialect

    /// Creates the Note table in `database` through `DataTables.statements`, as publishing the schema would.
    static func make(_ database: KizunaDatabase) async throws -> NotesFixture {
        let schema = try DataSchema(sdl: sdl)
        let dialect = DataTables.Dialect(database)
        let plan = SchemaPlan(from: .empty, to: schema)
        for statement in DataTables.statements(for: plan, app: "notes", schema: schema, previous: .empty, dialect: dialect) {
            try await database.raw(SQLQueryString(statement)).run()
        }
        let model = try #require(schema.model(named: "Note"))
        return NotesFixture(database: database, schema: schema, model: model, table: DataTables.table(app: "notes", model: "Note"), dialect: dialect)
    }

    /// Inserts `notes` with raw SQL, values bound.
    func insert(_ notes: [Note]) async throws {
        let columns = [
            "id", "roomId", "title", "likes", "score", "done", "dueAt", "mood", "tags", "sizes", "meta", "createdAt", "updatedAt", "_version",
            "_deleted", "_seq",
        ]
        for note in notes {
            let values: [any SQLExpression] = [
                bind(note.id), bind(note.roomId), bind(note.title), bind(note.likes), bind(note.score), bind(note.done), bind(note.dueAt),
                bind(note.mood), json(note.tags), json(note.sizes), json(note.meta), bind(note.createdAt), bind(note.createdAt), bind(Int64(1)),
                bind(note.deleted), bind(Int64(1)),
            ]
            try await database.raw("INSERT INTO \(ident: table) (\(idents: columns, joinedBy: ", ")) VALUES (\(SQLList(values)))").run()
        }
    }

    private func bind(_ value: (any Encodable & Sendable)?) -> any SQLExpression {
        guard let value else { return SQLLiteral.null }
        return SQLBind(value)
    }

    /// JSON text for a JSON (TEXT) column on SQLite, cast for a JSONB column on PostgreSQL.
    private func json(_ text: String?) -> any SQLExpression {
        guard let text else { return SQLLiteral.null }
        if dialect == .postgres {
            let cast: SQLQueryString = "CAST(\(bind: text) AS JSONB)"
            return cast
        }
        return SQLBind(text)
    }

    /// The filter compiled for the Note table.
    func filter(_ filter: JSONValue?) throws(KizunaError) -> DataFilter {
        try DataFilter(filter, model: model, schema: schema, table: table, dialect: dialect)
    }

    /// The ids of the rows `filter` matches, in id order.
    func ids(_ filter: JSONValue) async throws -> [String] {
        let condition: any SQLExpression = try self.filter(filter).condition ?? SQLLiteral.boolean(true)
        let rows = try await database.raw("SELECT \(ident: "id") FROM \(ident: table) WHERE \(condition) ORDER BY \(ident: "id")").all()
        return try rows.map { try $0.decode(column: "id", as: String.self) }
    }

    /// A page of the Note table.
    func page(
        _ order: KeysetPage.Order = .createdAt, descending: Bool = false, limit: Int? = nil, after: PageCursor? = nil, filter: JSONValue? = nil
    ) throws(KizunaError) -> KeysetPage {
        let condition = try self.filter(filter).condition
        return try KeysetPage(
            model: model, schema: schema, table: table, dialect: dialect, order: order, descending: descending, limit: limit, after: after,
            filter: condition, scope: PageCursor.scope(of: ["filter": filter ?? .null]))
    }

    /// Every page of a list, following each `next` cursor; `between` runs after each page with its number (from 1)
    /// and ids.
    /// - Returns: The ids of each page.
    func pages(
        _ order: KeysetPage.Order = .createdAt, descending: Bool = false, limit: Int, filter: JSONValue? = nil,
        between: (Int, [String]) async throws -> Void = { _, _ in }
    ) async throws -> [[String]] {
        var pages: [[String]] = []
        var after: PageCursor?
        repeat {
            let (rows, next) = try await page(order, descending: descending, limit: limit, after: after, filter: filter).run(on: database)
            pages.append(try rows.map { try $0.decode(column: "id", as: String.self) })
            #expect(next == nil || rows.count == limit, "a page with a next cursor is full")
            after = next
            try await between(pages.count, pages[pages.count - 1])
        } while after != nil && pages.count <= 1_000
        return pages
    }
}
