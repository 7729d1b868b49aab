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
    /// One operator on one field, checked; `nil` after recording a problem.
    mutating func condition(_ op: FilterOperator, _ operand: JSONValue, on field: DataField, at path: FilterPath) -> FilterNode? {
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
        guard let checked = fieldTest(op, operand, on: field, at: path) else { return nil }
        return .test(field, checked)
    }

    /// What `op` with `operand` tests on `field`, its operand converted to the stored form; `nil` after recording a
    /// problem.
    private mutating func fieldTest(_ op: FilterOperator, _ operand: JSONValue, on field: DataField, at path: FilterPath) -> FieldTest? {
        switch op {
        case .attributeExists:
            guard case .bool(let exists) = operand else {
                problem(path, "must be true or false, not \(operand.typeName)", code: "wrong_type")
                return nil
            }
            return .exists(exists)
        case .eq, .ne:
            if field.isList || field.type == .scalar(.json) {
                guard let document = whole(operand, of: field, at: path) else { return nil }
                return .document(document.text, document.value, negated: op == .ne)
            }
            guard let value = stored(operand, of: field, at: path) else { return nil }
            return .equal(value, negated: op == .ne)
        case .lt, .le, .gt, .ge:
            guard let value = stored(operand, of: field, at: path) else { return nil }
            let orders: [FilterOperator: FieldTest.Order] = [.lt: .lt, .le: .le, .gt: .gt, .ge: .ge]
            return .order(orders[op] ?? .ge, value)
        case .between:
            guard case .array(let bounds) = operand, bounds.count == 2 else {
                problem(path, "must be an array of two values, the lowest and the highest (both included)", code: "wrong_type")
                return nil
            }
            let low = stored(bounds[0], of: field, at: path[0])
            let high = stored(bounds[1], of: field, at: path[1])
            guard let low, let high else { return nil }
            return .between(low, high)
        case .beginsWith:
            guard let prefix = text(operand, at: path) else { return nil }
            return .beginsWith(prefix)
        case .contains, .notContains:
            if field.isList {
                guard let element = stored(operand, of: field, at: path) else { return nil }
                return .containsElement(element, negated: op == .notContains)
            }
            guard let part = text(operand, at: path) else { return nil }
            return .containsText(part, negated: op == .notContains)
        case .in, .notIn:
            guard case .array(let items) = operand, !items.isEmpty else {
                problem(path, "must be a non-empty array of values", code: "wrong_type")
                return nil
            }
            guard items.count <= DataFilter.maximumValues else {
                problem(path, "lists \(items.count) values; at most \(DataFilter.maximumValues) are allowed", code: "too_many_values")
                return nil
            }
            var values: [StoredValue] = []
            for (index, item) in items.enumerated() {
                if let value = stored(item, of: field, at: path[index]) { values.append(value) }
            }
            guard values.count == items.count else { return nil }
            return .oneOf(values, negated: op == .notIn)
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

    /// A whole list or JSON document as JSON text in the stored form, and as the value that text holds; `nil` after
    /// recording a problem.
    private mutating func whole(_ operand: JSONValue, of field: DataField, at path: FilterPath) -> (text: String, value: JSONValue)? {
        guard field.isList else { return stored(operand, of: field, at: path).map { (text: $0.jsonElement, value: $0.json) } }
        guard case .array(let items) = operand else {
            problem(path, "must be an array, the whole list, not \(operand.typeName)", code: "wrong_type")
            return nil
        }
        var elements: [StoredValue] = []
        for (index, item) in items.enumerated() {
            if let element = stored(item, of: field, at: path[index]) { elements.append(element) }
        }
        guard elements.count == items.count else { return nil }
        return (text: "[" + elements.map(\.jsonElement).joined(separator: ",") + "]", value: JSONValue.array(elements.map(\.json)))
    }
}
