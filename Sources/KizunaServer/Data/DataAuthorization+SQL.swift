import Foundation
import KizunaCore
import SQLKit

extension DataAuthorization {
    /// The alias of the related table in a `via` check's subquery. Model tables are named `data_…`, so the alias
    /// never hides the outer table, even for a model related to itself.
    static let relatedAlias = "_via"

    /// `checks` as one condition on `model`'s table: ORed, since any one rule letting the caller in is enough.
    ///
    /// A check on an unset field is NULL rather than false, which a `WHERE` treats as false; the condition is meant
    /// for `WHERE` (and `AND`), never for `NOT`.
    func condition(_ checks: [RowCheck], on model: DataModel) -> SQLQueryString {
        let table = DataTables.table(app: app, model: model.name)
        let parts = checks.map { check in condition(check, table: table, model: model) }
        return FilterCompiler.joined(parts, by: "OR") ?? "\(false)"
    }

    /// One check: the owner test on the row itself, or, through `via`, on the live related row it references:
    /// `EXISTS (SELECT 1 FROM <related> AS _via WHERE _via.id = <table>.<reference> AND NOT deleted AND <test on _via>)`.
    private func condition(_ check: RowCheck, table: String, model: DataModel) -> SQLQueryString {
        guard let relation = check.via else { return ownerTest(check, table: table, model: model) }
        let target = DataTables.table(app: app, model: relation.target)
        let related: SQLQueryString = "\(ident: Self.relatedAlias)"
        let test = ownerTest(check, table: Self.relatedAlias, model: schema.model(named: relation.target) ?? model)
        let select: SQLQueryString = "SELECT 1 FROM \(ident: target) AS \(related)"
        let joins: SQLQueryString = "\(related).\(ident: "id") = \(ident: table).\(ident: relation.references)"
        let live: SQLQueryString = "\(related).\(ident: DataTables.deletedColumn) = \(false)"
        return "EXISTS (\(select) WHERE \(joins) AND \(live) AND \(test))"
    }

    /// The owner field of `table` equals the caller's id, or (a list) holds it, written as a filter writes `eq` and a
    /// list's `contains`, so both read the stored values the same way.
    private func ownerTest(_ check: RowCheck, table: String, model: DataModel) -> SQLQueryString {
        let compiler = FilterCompiler(model: model, schema: schema, table: table, dialect: dialect)
        let column = compiler.column(check.field)
        if check.isList { return compiler.listContains(column, .text(check.userId)) }
        return "\(column) = \(bind: check.userId)"
    }

    /// Loads the records `record`'s `via` relations lead to, as far as the rules allowing `operation` on `model` read
    /// them: each one's `id` and tested owner fields (a list as a JSON array), keyed by relation field. A relation
    /// whose id field is unset, or whose record is missing or deleted, is left out, so its rules let nobody in, as
    /// the SQL condition does.
    ///
    /// This is the one read a decision in memory needs: before a create (``mayCreate(_:record:related:for:)``), and
    /// once per delivered change, however many subscribers ``mayRead(_:record:related:for:)`` then decides for.
    /// - Parameters:
    ///   - model: The record's model.
    ///   - record: The record's stored fields, whose reference fields (`roomId`) name the related records.
    ///   - operation: The operation decided, which says which rules (and so which relations) count.
    ///   - database: The store, or the transaction the create runs in.
    /// - Throws: What the database throws.
    package func relatedRecords(
        of model: DataModel, record: [String: JSONValue], for operation: DataOperation, on database: any SQLDatabase
    ) async throws -> [String: [String: JSONValue]] {
        var related: [String: [String: JSONValue]] = [:]
        for (relation, fields) in viaFields(of: model, for: operation) {
            guard case .string(let id)? = record[relation.references] else { continue }
            let table = DataTables.table(app: app, model: relation.target)
            let target = schema.model(named: relation.target)
            // Read as text on both engines: a JSONB list arrives as its JSON text, the form SQLite stores.
            let columns = fields.map { field -> SQLQueryString in "CAST(\(ident: table).\(ident: field) AS TEXT) AS \(ident: field)" }
            let list = columns.joined(separator: ", ")
            let live: SQLQueryString = "\(ident: table).\(ident: DataTables.deletedColumn) = \(false)"
            let query: SQLQueryString = "SELECT \(list) FROM \(ident: table) WHERE \(ident: table).\(ident: "id") = \(bind: id) AND \(live)"
            guard let row = try await database.raw(query).first() else { continue }
            var values: [String: JSONValue] = ["id": .string(id)]
            for field in fields {
                let isList = target?.field(named: field)?.isList ?? false
                values[field] = try Self.value(of: field, in: row, isList: isList)
            }
            related[relation.field] = values
        }
        return related
    }

    /// An owner field read as text: the string itself, or for a list the JSON array its text holds (`null` when the
    /// text is not JSON, which no owner test matches).
    private static func value(of column: String, in row: any SQLRow, isList: Bool) throws -> JSONValue {
        guard try !row.decodeNil(column: column) else { return .null }
        let text = try row.decode(column: column, as: String.self)
        guard isList else { return .string(text) }
        return (try? JSONValue(parsing: text)) ?? .null
    }
}
