import Foundation
import KizunaCore
import SQLKit

/// A record as a mutation writes it: each stored field's value in its column's form, and the same record as JSON,
/// the form the rule engine decides on and idempotent creates are compared in.
///
/// Values arrive as GraphQL input (a DateTime as ISO 8601 text, a list as a JSON array); they are converted once,
/// here, with ``StoredValue/convert(_:to:schema:)``, the same conversion filters use, so what a filter compares and
/// what a mutation stores never disagree.
struct DataWrite: Sendable {
    /// The model written.
    let model: DataModel
    /// The column values set by this write, by field name; `nil` for NULL.
    private(set) var columns: [String: StoredValue?] = [:]
    /// The stored record after the write as JSON (a list as an array, a DateTime as epoch milliseconds), for the rule
    /// engine (``DataAuthorization/allows(_:on:record:related:for:)``).
    private(set) var record: [String: JSONValue]

    /// The fields a client writes: declared ones, less the automatic fields and the owner fields the server fills.
    static func writable(_ model: DataModel, ownerFields: [String]) -> [DataField] {
        model.fields.filter { !$0.isAutomatic && !ownerFields.contains($0.name) }
    }

    /// A new record from a create's input: every writable field from the input or its `@default`, the owner fields
    /// from the caller (whatever the input says), and the automatic fields.
    /// - Throws: `validation_failed` naming every field whose value does not fit, or a required field left out.
    static func create(
        _ model: DataModel, input: [String: JSONValue], id: String, caller: DataCaller, ownerFields: [String], schema: DataSchema, now: Int64
    ) throws(KizunaError) -> DataWrite {
        var write = DataWrite(model: model, record: ["id": .string(id)])
        var problems: [KizunaError.Detail] = []
        for field in writable(model, ownerFields: ownerFields) {
            var value = input[field.name] ?? .null
            // A field left out, or sent as null, that has a default gets it: a required field with a default is
            // optional in the input.
            if value == .null, let fallback = field.defaultValue { value = fallback }
            if value == .null, field.isRequired {
                problems.append(KizunaError.Detail(code: "required", message: "\(field.name) is required.", field: field.name))
                continue
            }
            write.set(field, to: value, schema: schema, problems: &problems)
        }
        for name in ownerFields {
            guard let field = model.field(named: name) else { continue }
            write.set(field, to: caller.userId.map(JSONValue.string) ?? .null, schema: schema, problems: &problems)
        }
        write.columns["id"] = .text(id)
        write.set(automatic: "createdAt", .integer(now))
        write.set(automatic: "updatedAt", .integer(now))
        write.set(automatic: "_version", .integer(1))
        try throwIfAny(problems, model: model, verb: "create")
        return write
    }

    /// The changes an update's input makes to `current` (the stored record as JSON): each writable field the input
    /// names, an explicit null clearing an optional one. Owner fields in the input are ignored: they stay the
    /// server's. The automatic fields are the UPDATE's to set.
    /// - Throws: `validation_failed` naming every field whose value does not fit, or a required field set to null.
    static func update(
        _ model: DataModel, input: [String: JSONValue], current: [String: JSONValue], ownerFields: [String], schema: DataSchema
    ) throws(KizunaError) -> DataWrite {
        var write = DataWrite(model: model, record: current)
        var problems: [KizunaError.Detail] = []
        for field in writable(model, ownerFields: ownerFields) {
            guard let value = input[field.name] else { continue }
            if value == .null, field.isRequired {
                problems.append(KizunaError.Detail(code: "required", message: "\(field.name) is required; it cannot be null.", field: field.name))
                continue
            }
            write.set(field, to: value, schema: schema, problems: &problems)
        }
        try throwIfAny(problems, model: model, verb: "update")
        return write
    }

    private static func throwIfAny(_ problems: [KizunaError.Detail], model: DataModel, verb: String) throws(KizunaError) {
        guard !problems.isEmpty else { return }
        let fields = problems.compactMap(\.field).joined(separator: ", ")
        throw KizunaError(.validationFailed, "Cannot \(verb) \(model.name): \(fields) not valid.", field: "input", details: problems)
    }

    private mutating func set(_ field: DataField, to value: JSONValue, schema: DataSchema, problems: inout [KizunaError.Detail]) {
        if value == .null {
            columns[field.name] = .some(nil)
            record[field.name] = .null
            return
        }
        guard field.isList else {
            switch StoredValue.convert(value, to: field.type, schema: schema) {
            case .success(let stored):
                columns[field.name] = stored
                record[field.name] = stored.json
            case .failure(let problem):
                problems.append(KizunaError.Detail(code: "invalid_value", message: "\(field.name) \(problem.message).", field: field.name))
            }
            return
        }
        guard case .array(let elements) = value else {
            problems.append(KizunaError.Detail(code: "invalid_value", message: "\(field.name) must be a list.", field: field.name))
            return
        }
        var stored: [StoredValue] = []
        for (position, element) in elements.enumerated() {
            switch StoredValue.convert(element, to: field.type, schema: schema) {
            case .success(let value): stored.append(value)
            case .failure(let problem):
                problems.append(
                    KizunaError.Detail(code: "invalid_value", message: "\(field.name)[\(position)] \(problem.message).", field: field.name))
            }
        }
        let text = "[" + stored.map(\.jsonElement).joined(separator: ",") + "]"
        columns[field.name] = .json(text)
        record[field.name] = .array(stored.map(\.json))
    }

    private mutating func set(automatic name: String, _ value: StoredValue) {
        guard model.field(named: name) != nil else { return }
        columns[name] = value
        record[name] = value.json
    }

    /// The value bound for a column: NULL, a JSON document cast to JSONB on PostgreSQL, or the value itself.
    static func bind(_ value: StoredValue?, dialect: DataTables.Dialect) -> SQLQueryString {
        switch value {
        case nil: return "NULL"
        case .json(let text)? where dialect == .postgres: return "CAST(\(bind: text) AS JSONB)"
        case let value?: return "\(bind: value.bindable)"
        }
    }

    /// The columns this write sets, in the model's field order, for an INSERT or an UPDATE.
    var orderedColumns: [(name: String, value: StoredValue?)] {
        model.fields.compactMap { field in columns[field.name].map { (field.name, $0) } }
    }
}

extension StoredValue {
    /// The value as JSON, the form the rule engine reads records in.
    var json: JSONValue {
        switch self {
        case .text(let value): return .string(value)
        case .integer(let value): return .number(Double(value))
        case .real(let value): return .number(value)
        case .bool(let value): return .bool(value)
        case .json(let text): return (try? JSONValue(parsing: text)) ?? .null
        }
    }
}
