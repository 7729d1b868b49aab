import Foundation
import KizunaCore
import SQLKit

/// Where an app's models live in the store, and the DDL that makes the tables follow a schema plan.
///
/// Each `@model` is a typed table with a real column per stored field and real indexes, on both engines, so sorting
/// and filtering run in the database. Column names are the GraphQL field names, quoted (case kept). Every table has
/// the automatic columns (`id`, `createdAt`, `updatedAt`, `_version`, plus an added `owner`) and two of the
/// server's own: `_deleted` (a tombstone, kept for the sync retention) and `_seq` (the `changes` position of the
/// row's last change, which `syncX(since:)` reads in order).
package enum DataTables {
    /// The table of `model` for `app`: `data_<10 hex of SHA-256(app)>_<Model>`. Hashing the app id keeps any id
    /// (63 characters at most) inside PostgreSQL's 63-byte identifiers next to a 48-character model name.
    package static func table(app: String, model: String) -> String {
        "data_\(sha256Hex(app).prefix(10))_\(model)"
    }

    /// An index's name: hashed, since table and index names together exceed identifier limits.
    package static func indexName(table: String, index: String) -> String {
        "ix_\(sha256Hex("\(table).\(index)").prefix(20))"
    }

    /// Drops every model table of `app`, found by its name's prefix, so a deleted app leaves no records behind and an
    /// app registered again with the same id starts empty.
    package static func dropTables(app: String, on db: any SQLDatabase) async throws {
        let prefix = "data_\(sha256Hex(app).prefix(10))_"
        let listing: SQLQueryString =
            Dialect(db) == .postgres
            ? "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND substr(table_name, 1, \(literal: prefix.count)) = \(bind: prefix)"
            : "SELECT name FROM sqlite_master WHERE type = 'table' AND substr(name, 1, \(literal: prefix.count)) = \(bind: prefix)"
        for row in try await db.raw(listing).all() {
            let table = try row.decode(column: "name", as: String.self)
            try await db.raw("DROP TABLE IF EXISTS \(ident: table)").run()
        }
    }

    /// The server's own columns, besides the fields.
    package static let deletedColumn = "_deleted"
    package static let seqColumn = "_seq"

    /// The statements that carry `plan` out on the store, in order, for an app whose schema becomes `schema` (and
    /// was `previous`): the instant part, run in the publish's transaction. What takes time on a big table (an index
    /// on a model that exists, a default without a constant form to fill in) is left to jobs: see
    /// ``jobs(for:app:schema:previous:dialect:)``.
    package static func statements(for plan: SchemaPlan, app: String, schema: DataSchema, previous: DataSchema, dialect: Dialect) -> [String] {
        var statements: [String] = []
        for change in plan.changes {
            let table = table(app: app, model: change.model)
            switch change.action {
            case .createModel:
                guard let model = schema.model(named: change.model) else { continue }
                statements += create(model, table: table, dialect: dialect)
            case .dropModel:
                statements.append("DROP TABLE IF EXISTS \(quoted(table))")
            case .addField:
                guard let field = change.field.flatMap({ schema.model(named: change.model)?.field(named: $0) }) else { continue }
                statements.append("ALTER TABLE \(quoted(table)) ADD COLUMN \(column(field, dialect: dialect))")
            case .dropField:
                guard let field = change.field else { continue }
                statements.append("ALTER TABLE \(quoted(table)) DROP COLUMN \(quoted(field))")
            case .changeField:
                // A field whose stored type changes is dropped and added again: destructive, so only with
                // `allowDestructive`. A change of required-ness alone leaves the column as it is (the API enforces it).
                guard let name = change.field, let field = schema.model(named: change.model)?.field(named: name),
                    let old = previous.model(named: change.model)?.field(named: name),
                    sqlType(old, dialect: dialect) != sqlType(field, dialect: dialect)
                else { continue }
                statements.append("ALTER TABLE \(quoted(table)) DROP COLUMN \(quoted(name))")
                statements.append("ALTER TABLE \(quoted(table)) ADD COLUMN \(column(field, dialect: dialect))")
            case .addIndex:
                continue  // the model's table exists and may be big: built by a job, without blocking writes
            case .dropIndex:
                guard let name = change.index else { continue }
                statements.append("DROP INDEX IF EXISTS \(quoted(indexName(table: table, index: name)))")
            case .changeEnum, .changeRules, .changeRelations:
                continue  // enums are stored as text, rules and relations are the API's: nothing to change in the store
            }
        }
        return statements
    }

    /// The engine the DDL is written for.
    package enum Dialect: Sendable {
        case sqlite, postgres

        /// The dialect of `database`.
        package init(_ database: any SQLDatabase) {
            self = database.dialect.name == "postgresql" ? .postgres : .sqlite
        }
    }

    private static func create(_ model: DataModel, table: String, dialect: Dialect) -> [String] {
        let falseLiteral = dialect == .postgres ? "false" : "0"
        var columns = model.fields.map { field in
            field.name == "id" ? "\(quoted("id")) TEXT PRIMARY KEY NOT NULL" : column(field, dialect: dialect, automaticNotNull: true)
        }
        columns.append("\(quoted(deletedColumn)) BOOLEAN NOT NULL DEFAULT \(falseLiteral)")
        columns.append("\(quoted(seqColumn)) BIGINT NOT NULL")
        var statements = ["CREATE TABLE \(quoted(table)) (\(columns.joined(separator: ", ")))"]
        // The default list order (createdAt, then id) and the sync order (seq) are indexed from the start.
        statements.append(createIndex(DataIndex(name: "_byCreatedAt", partitionKey: "createdAt", sortKeys: []), table: table))
        statements.append("CREATE INDEX \(quoted(indexName(table: table, index: "_bySeq"))) ON \(quoted(table)) (\(quoted(seqColumn)))")
        statements += model.indexes.map { createIndex($0, table: table) }
        return statements
    }

    /// An index on the partition key, then the sort keys, then `id`, so every page of a keyset scan is an index range.
    private static func createIndex(_ index: DataIndex, table: String) -> String {
        let columns = indexColumns(index).map(quoted).joined(separator: ", ")
        return "CREATE INDEX \(quoted(indexName(table: table, index: index.name))) ON \(quoted(table)) (\(columns))"
    }

    /// The columns of `index`'s SQL index, in order.
    package static func indexColumns(_ index: DataIndex) -> [String] {
        [index.partitionKey] + index.sortKeys + ["id"]
    }

    private static func column(_ field: DataField, dialect: Dialect, automaticNotNull: Bool = false) -> String {
        var text = "\(quoted(field.name)) \(sqlType(field, dialect: dialect))"
        if automaticNotNull, field.isAutomatic, field.name != "owner" { text += " NOT NULL" }
        if let value = field.defaultValue, let literal = literal(value, for: field, dialect: dialect) { text += " DEFAULT \(literal)" }
        return text
    }

    /// The column type a field is stored as. DateTime is stored as epoch milliseconds, so it sorts and compares as a
    /// number on both engines; lists and JSON as JSON text (JSONB on PostgreSQL).
    package static func sqlType(_ field: DataField, dialect: Dialect) -> String {
        if field.isList { return dialect == .postgres ? "JSONB" : "TEXT" }
        switch field.type {
        case .enumeration: return "TEXT"
        case .scalar(let scalar):
            switch scalar {
            case .id, .string: return "TEXT"
            case .int, .dateTime: return "BIGINT"
            case .float: return dialect == .postgres ? "DOUBLE PRECISION" : "REAL"
            case .boolean: return "BOOLEAN"
            case .json: return dialect == .postgres ? "JSONB" : "TEXT"
            }
        }
    }

    /// A default as an SQL literal; `nil` for what has no constant literal here (lists, JSON, DateTime), whose
    /// existing rows a backfill job fills instead.
    static func literal(_ value: JSONValue, for field: DataField, dialect: Dialect) -> String? {
        // JSON text in a JSONB column would need a cast, and a JSON string default is not JSON text.
        guard !field.isList, field.type != .scalar(.json) else { return nil }
        switch value {
        case .string(let text):
            if case .scalar(.dateTime) = field.type { return nil }  // converted to milliseconds by the API, not here
            return "'\(text.replacingOccurrences(of: "'", with: "''"))'"
        case .number(let number):
            if case .scalar(.int) = field.type { return String(Int64(number)) }
            return String(number)
        case .bool(let flag):
            return dialect == .postgres ? (flag ? "true" : "false") : (flag ? "1" : "0")
        default:
            return nil
        }
    }

    /// An identifier in double quotes, as both engines read it (case kept).
    package static func quoted(_ identifier: String) -> String {
        "\"\(identifier.replacingOccurrences(of: "\"", with: "\"\""))\""
    }
}
