import Foundation
import Hummingbird
import KizunaCore

/// An app's Data pages: the schema, a model's records, a record's form.
enum ConsoleDataPages {
    typealias Problem = ConsolePages.Problem

    /// What a model's page shows: one filter (field, operator, value), the order, and the page's cursor.
    struct Browse {
        var field: String?
        var op: String
        var value: String
        var newestFirst: Bool
        var next: String?

        init(_ query: Parameters) {
            field = query["field"].map(String.init).flatMap { $0.isEmpty ? nil : $0 }
            op = query["op"].map(String.init) ?? "eq"
            value = query["value"].map(String.init) ?? ""
            newestFirst = query["order"] != "oldest"
            next = query["next"].map(String.init).flatMap { $0.isEmpty ? nil : $0 }
        }

        /// The query string of this filter and order (no cursor), for the next page's link.
        var filterQuery: [URLQueryItem] {
            var items = [URLQueryItem(name: "order", value: newestFirst ? "newest" : "oldest")]
            if let field {
                items += [URLQueryItem(name: "field", value: field), URLQueryItem(name: "op", value: op), URLQueryItem(name: "value", value: value)]
            }
            return items
        }
    }

    /// A record's form: each writable field's value as text, and the version it was read at.
    struct RecordForm {
        var values: [String: String]
        var version: Int64

        init(record: JSONValue, model: DataModel) {
            values = Dictionary(uniqueKeysWithValues: editable(model).map { ($0.name, ConsoleDataPages.text(record[$0.name], field: $0)) })
            version = Int64(record["_version"]?.numberValue ?? 0)
        }

        init(posted: [String: String], model: DataModel) {
            values = Dictionary(uniqueKeysWithValues: editable(model).map { ($0.name, posted["field-\($0.name)"] ?? "") })
            version = posted["_version"].flatMap { Int64($0) } ?? 0
        }

        /// The update's input: `id`, `_version` and every writable field, each read as its type; nil with the
        /// problems, by field, when a value does not fit its type.
        func input(id: String, model: DataModel) -> ([String: JSONValue]?, [Problem]) {
            var input: [String: JSONValue] = ["id": .string(id), "_version": .number(Double(version))]
            var problems: [Problem] = []
            for field in editable(model) {
                do {
                    input[field.name] = try ConsoleDataPages.value(values[field.name] ?? "", of: field)
                } catch {
                    problems.append(Problem(field: "field-\(field.name)", message: "\(field.name): \(error.message)"))
                }
            }
            return problems.isEmpty ? (input, []) : (nil, problems)
        }
    }

    /// The fields an operator edits: the writable ones (not `id`, the timestamps, `_version` or server-set owners).
    static func editable(_ model: DataModel) -> [DataField] {
        DataWrite.writable(model, ownerFields: model.serverFilledOwnerFields)
    }

    /// Every stored field and `_deleted`, for a selection set.
    static func selection(_ model: DataModel) -> String {
        (model.fields.map(\.name) + ["_deleted"]).joined(separator: " ")
    }

    /// The filter operators a field's type takes, as the generated filter inputs define them.
    static func operators(_ field: DataField) -> [String] {
        if field.isList { return ["contains", "notContains"] }
        switch field.type {
        case .scalar(.string), .scalar(.id): return ["eq", "ne", "beginsWith", "contains", "notContains", "gt", "ge", "lt", "le"]
        case .scalar(.int), .scalar(.float), .scalar(.dateTime): return ["eq", "ne", "gt", "ge", "lt", "le"]
        case .scalar(.boolean), .enumeration: return ["eq", "ne"]
        case .scalar(.json): return []
        }
    }

    /// A filter's value typed as `field` takes it.
    static func filterValue(_ text: String, of field: DataField, op: String) throws(KizunaError) -> JSONValue {
        guard operators(field).contains(op) else { throw KizunaError(.badRequest, "\(op) does not apply to \(field.typeDescription)") }
        return try scalar(text, of: field)
    }

    /// A form's text as `field`'s value: empty is null for an optional field; a list or JSON is JSON text.
    static func value(_ text: String, of field: DataField) throws(KizunaError) -> JSONValue {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.isEmpty, !field.isRequired || field.isList { return field.isRequired ? .array([]) : .null }
        if field.isList || field.type == .scalar(.json) {
            do {
                return try JSONValue(parsing: trimmed)
            } catch {
                throw KizunaError(.badRequest, "is not JSON")
            }
        }
        if field.type == .scalar(.string) { return .string(text) }
        return try scalar(trimmed, of: field)
    }

    private static func scalar(_ text: String, of field: DataField) throws(KizunaError) -> JSONValue {
        switch field.type {
        case .scalar(.int):
            guard let number = Int(text) else { throw KizunaError(.badRequest, "is not a whole number") }
            return .number(Double(number))
        case .scalar(.float):
            guard let number = Double(text), number.isFinite else { throw KizunaError(.badRequest, "is not a number") }
            return .number(number)
        case .scalar(.boolean):
            guard let bool = ["true": true, "false": false][text.lowercased()] else { throw KizunaError(.badRequest, "is not true or false") }
            return .bool(bool)
        default:
            return .string(text)
        }
    }

    /// A value as a form shows it: text as it is, a number without a needless `.0`, a list or JSON as JSON text.
    static func text(_ value: JSONValue?, field: DataField) -> String {
        switch value {
        case nil, .null?: ""
        case .string(let text)?: text
        case .number(let number)?: number.rounded() == number && abs(number) < 1e15 ? String(Int64(number)) : String(number)
        case .bool(let bool)?: bool ? "true" : "false"
        case let other?: ConsoleConfigPages.text(of: other, pretty: false)
        }
    }

    static func modelPath(_ app: AppRecord, _ model: DataModel) -> String {
        "\(ConsoleAppPages.Tab.data.path(app))/\(ConsoleController.escapedSegment(model.name))"
    }

    static func recordPath(_ app: AppRecord, _ model: DataModel, _ id: String) -> String {
        "\(modelPath(app, model))/\(ConsoleController.escapedSegment(id))"
    }

    static func escape(_ text: String) -> String {
        ConsolePages.escape(text)
    }
}
