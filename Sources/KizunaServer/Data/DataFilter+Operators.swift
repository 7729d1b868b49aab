import KizunaCore
import SQLKit

/// An operator of a field condition, spelled as Amplify spells it.
enum FilterOperator: String, CaseIterable, Sendable {
    case eq, ne, lt, le, gt, ge, between, beginsWith, contains, notContains
    case `in`, notIn, attributeExists

    /// The operators a field's type takes, in declaration order.
    ///
    /// Ordering operators need a type whose order means something; `beginsWith` a text column; a list or a JSON
    /// document compares whole (`eq`, `ne`), and a list tests its elements with `contains` and `notContains`.
    static func supported(by field: DataField) -> [FilterOperator] {
        if field.isList { return [.eq, .ne, .contains, .notContains, .attributeExists] }
        switch field.type {
        case .scalar(.id), .scalar(.string): return allCases
        case .enumeration: return [.eq, .ne, .beginsWith, .in, .notIn, .attributeExists]
        case .scalar(.int), .scalar(.float), .scalar(.dateTime): return [.eq, .ne, .lt, .le, .gt, .ge, .between, .in, .notIn, .attributeExists]
        case .scalar(.boolean), .scalar(.json): return [.eq, .ne, .attributeExists]
        }
    }

    /// The operators `field` takes, for messages.
    static func names(for field: DataField) -> String {
        supported(by: field).map(\.rawValue).joined(separator: ", ")
    }
}

extension FilterCompiler {
    /// One operator on one field, as SQL; `nil` after recording a problem.
    mutating func condition(_ op: FilterOperator, _ operand: JSONValue, on field: DataField, at path: FilterPath) -> SQLQueryString? {
        guard FilterOperator.supported(by: field).contains(op) else {
            problem(
                path, "does not apply to \(field.name), a \(field.typeDescription) field; it takes \(FilterOperator.names(for: field))",
                code: "unsupported_operator")
            return nil
        }
        if operand == .null {
            problem(path, "must not be null; attributeExists: false finds records without \(field.name)", code: "wrong_type")
            return nil
        }
        let column = self.column(field.name)
        switch op {
        case .attributeExists:
            guard case .bool(let exists) = operand else {
                problem(path, "must be true or false, not \(operand.typeName)", code: "wrong_type")
                return nil
            }
            if exists { return "\(column) IS NOT NULL" }
            return "\(column) IS NULL"
        case .eq, .ne:
            let equal: SQLQueryString
            if field.isList || field.type == .scalar(.json) {
                guard let document = whole(operand, of: field, at: path) else { return nil }
                equal = jsonEquals(column, document)
            } else {
                guard let value = stored(operand, of: field, at: path) else { return nil }
                equal = "\(column) = \(bind: value.bindable)"
            }
            // An unset field is not equal to any value, as in Amplify.
            if op == .eq { return equal }
            return "(\(column) IS NULL OR NOT (\(equal)))"
        case .lt, .le, .gt, .ge:
            guard let value = stored(operand, of: field, at: path) else { return nil }
            let symbol = [FilterOperator.lt: "<", .le: "<=", .gt: ">", .ge: ">="][op] ?? "="
            return "\(column) \(unsafeRaw: symbol) \(bind: value.bindable)"
        case .between:
            guard case .array(let bounds) = operand, bounds.count == 2 else {
                problem(path, "must be an array of two values, the lowest and the highest (both included)", code: "wrong_type")
                return nil
            }
            let low = stored(bounds[0], of: field, at: path[0])
            let high = stored(bounds[1], of: field, at: path[1])
            guard let low, let high else { return nil }
            return "\(column) BETWEEN \(bind: low.bindable) AND \(bind: high.bindable)"
        case .beginsWith:
            guard let prefix = text(operand, at: path) else { return nil }
            return beginsWith(column, prefix)
        case .contains, .notContains:
            let found: SQLQueryString
            if field.isList {
                guard let element = stored(operand, of: field, at: path) else { return nil }
                found = listContains(column, element)
            } else {
                guard let part = text(operand, at: path) else { return nil }
                found = textContains(column, part)
            }
            if op == .contains { return found }
            return "(\(column) IS NULL OR NOT (\(found)))"
        case .in, .notIn:
            guard case .array(let items) = operand, !items.isEmpty else {
                problem(path, "must be a non-empty array of values", code: "wrong_type")
                return nil
            }
            guard items.count <= DataFilter.maximumValues else {
                problem(path, "lists \(items.count) values; at most \(DataFilter.maximumValues) are allowed", code: "too_many_values")
                return nil
            }
            var values: [any Encodable & Sendable] = []
            for (index, item) in items.enumerated() {
                if let value = stored(item, of: field, at: path[index]) { values.append(value.bindable) }
            }
            guard values.count == items.count else { return nil }
            if op == .in { return "\(column) IN (\(binds: values))" }
            return "(\(column) IS NULL OR \(column) NOT IN (\(binds: values)))"
        }
    }

    /// `operand` as one stored value of `field`'s type (an element, for a list); `nil` after recording a problem.
    mutating func stored(_ operand: JSONValue, of field: DataField, at path: FilterPath) -> StoredValue? {
        switch StoredValue.convert(operand, to: field.type, schema: schema) {
        case .success(let value):
            return value
        case .failure(let refusal):
            problem(path, refusal.message, code: "invalid_value")
            return nil
        }
    }

    /// `operand` as a string, for `beginsWith` and a text `contains`; `nil` after recording a problem.
    private mutating func text(_ operand: JSONValue, at path: FilterPath) -> String? {
        guard case .string(let text) = operand else {
            problem(path, "must be a string, not \(operand.typeName)", code: "wrong_type")
            return nil
        }
        return text
    }

    /// A whole list or JSON document as JSON text; `nil` after recording a problem.
    private mutating func whole(_ operand: JSONValue, of field: DataField, at path: FilterPath) -> String? {
        guard field.isList else { return stored(operand, of: field, at: path).map(\.jsonElement) }
        guard case .array(let items) = operand else {
            problem(path, "must be an array, the whole list, not \(operand.typeName)", code: "wrong_type")
            return nil
        }
        var elements: [String] = []
        for (index, item) in items.enumerated() {
            if let element = stored(item, of: field, at: path[index]) { elements.append(element.jsonElement) }
        }
        guard elements.count == items.count else { return nil }
        return "[" + elements.joined(separator: ",") + "]"
    }

    /// Two JSON documents are equal: JSONB's own equality on PostgreSQL; on SQLite, the same text once `json()` has
    /// removed the white space.
    private func jsonEquals(_ column: SQLQueryString, _ document: String) -> SQLQueryString {
        switch dialect {
        case .sqlite: return "json(\(column)) = json(\(bind: document))"
        case .postgres: return "\(column) = CAST(\(bind: document) AS JSONB)"
        }
    }

    /// The text starts with `prefix`, case-sensitively. SQLite's LIKE ignores case and both engines' LIKE reads `%`
    /// and `_`, so neither uses it.
    private func beginsWith(_ column: SQLQueryString, _ prefix: String) -> SQLQueryString {
        switch dialect {
        case .sqlite: return "substr(\(column), 1, length(\(bind: prefix))) = \(bind: prefix)"
        case .postgres: return "starts_with(\(column), \(bind: prefix))"
        }
    }

    /// The text holds `part`, case-sensitively.
    private func textContains(_ column: SQLQueryString, _ part: String) -> SQLQueryString {
        switch dialect {
        case .sqlite: return "instr(\(column), \(bind: part)) > 0"
        case .postgres: return "strpos(\(column), \(bind: part)) > 0"
        }
    }

    /// The list holds `element`. The element is bound as a one-element JSON array cast to JSONB on PostgreSQL
    /// (containment, which compares numbers by value); SQLite compares each element `json_each` reads, whose
    /// columns are qualified because `json_each` has columns of its own (`key`, `value`, `type`, `path`, …). The
    /// access rules test an owners list with it too, so list membership is written once per engine.
    func listContains(_ column: SQLQueryString, _ element: StoredValue) -> SQLQueryString {
        switch dialect {
        case .sqlite:
            let alias: SQLQueryString = "\(ident: "_element")"
            return "EXISTS (SELECT 1 FROM json_each(\(column)) AS \(alias) WHERE \(alias).\(ident: "value") = \(bind: element.bindable))"
        case .postgres:
            let list = "[\(element.jsonElement)]"
            return "\(column) @> CAST(\(bind: list) AS JSONB)"
        }
    }
}
