import KizunaCore
import SQLKit

/// A filter after checking: what ``FilterCompiler`` makes of Amplify's filter grammar, with every operand already in
/// its stored form. The SQL a list query runs (``FilterCompiler/sql(_:)``) and the in-memory test a subscription runs
/// on each change (``holds(on:dialect:)``) are both written from it, so they read one filter the same way.
///
/// Unset fields follow one rule on both sides: a test on an unset field is false (SQL's NULL, which `WHERE` drops),
/// the negated tests (`ne`, `notContains`, `notIn`) hold on it, and `not` holds where its filter does not.
indirect enum FilterNode: Sendable, Equatable {
    /// Every part holds.
    case and([FilterNode])
    /// At least one part holds.
    case or([FilterNode])
    /// The filter does not hold, an unset field's test counting as false (not as SQL's unknown).
    case not(FilterNode)
    /// Nothing matches: the negation of an empty filter.
    case nothing
    /// One operator on one stored field.
    case test(DataField, FieldTest)

    /// `parts` as one node that needs all of them; `nil` for none (a filter that tests nothing).
    static func conjunction(_ parts: [FilterNode]) -> FilterNode? {
        parts.count <= 1 ? parts.first : FilterNode.and(parts)
    }

    /// `parts` as one node that needs any of them; `nil` for none.
    static func disjunction(_ parts: [FilterNode]) -> FilterNode? {
        parts.count <= 1 ? parts.first : FilterNode.or(parts)
    }
}

/// One operator's test on a field, its operands in the stored form (a DateTime as epoch milliseconds).
enum FieldTest: Sendable, Equatable {
    /// `attributeExists`: the field is set (`true`) or unset (`false`).
    case exists(Bool)
    /// `eq`, or `ne` when negated, on a scalar.
    case equal(StoredValue, negated: Bool)
    /// `eq`, or `ne` when negated, on a whole list or JSON document: its JSON text as a column would hold it, and
    /// the value that text holds.
    case document(String, JSONValue, negated: Bool)
    /// `lt`, `le`, `gt`, `ge`.
    case order(Order, StoredValue)
    /// `between`, both bounds included.
    case between(StoredValue, StoredValue)
    /// `beginsWith`, case-sensitive.
    case beginsWith(String)
    /// `contains`, or `notContains` when negated, on text: case-sensitive, `%` and `_` meaning themselves.
    case containsText(String, negated: Bool)
    /// `contains`, or `notContains` when negated, on a list: one element.
    case containsElement(StoredValue, negated: Bool)
    /// `in`, or `notIn` when negated.
    case oneOf([StoredValue], negated: Bool)

    /// An ordering operator.
    enum Order: String, Sendable, Equatable {
        case lt = "<"
        case le = "<="
        case gt = ">"
        case ge = ">="
    }
}

extension FilterCompiler {
    /// `node` as one SQL condition on ``table``, values bound.
    ///
    /// A test on an unset field is NULL, which `WHERE` treats as false; NULL never reaches a `NOT` (the negated tests
    /// say `IS NULL OR NOT …`, and `not` wraps its filter in `COALESCE(…, false)`), so the condition holds exactly
    /// where ``FilterNode/holds(on:dialect:)`` does.
    func sql(_ node: FilterNode) -> SQLQueryString {
        switch node {
        case .and(let parts): return Self.joined(parts.map { sql($0) }, by: "AND") ?? "\(true)"
        case .or(let parts): return Self.joined(parts.map { sql($0) }, by: "OR") ?? "\(false)"
        case .not(let inner):
            // SQL's NOT keeps NULL (an unset field) unknown, so `not: { done: { eq: true } }` would leave out
            // records without `done`; as in Amplify, a test on an unset field is false, and its negation true.
            return "(NOT COALESCE(\(sql(inner)), \(false)))"
        case .nothing: return "\(false)"
        case .test(let field, let test): return sql(test, on: column(field.name))
        }
    }

    /// One field test on `column`.
    private func sql(_ test: FieldTest, on column: SQLQueryString) -> SQLQueryString {
        switch test {
        case .exists(let exists):
            return exists ? "\(column) IS NOT NULL" : "\(column) IS NULL"
        case .equal(let value, let negated):
            return negatable("\(column) = \(bind: value.bindable)", on: column, negated: negated)
        case .document(let text, _, let negated):
            return negatable(jsonEquals(column, text), on: column, negated: negated)
        case .order(let order, let value):
            return "\(column) \(unsafeRaw: order.rawValue) \(bind: value.bindable)"
        case .between(let low, let high):
            return "\(column) BETWEEN \(bind: low.bindable) AND \(bind: high.bindable)"
        case .beginsWith(let prefix):
            return beginsWith(column, prefix)
        case .containsText(let part, let negated):
            return negatable(textContains(column, part), on: column, negated: negated)
        case .containsElement(let element, let negated):
            return negatable(listContains(column, element), on: column, negated: negated)
        case .oneOf(let values, let negated):
            let binds = values.map(\.bindable)
            if negated { return "(\(column) IS NULL OR \(column) NOT IN (\(binds: binds)))" }
            return "\(column) IN (\(binds: binds))"
        }
    }

    /// `found`, or with `negated` its negation that also holds on an unset field (an unset field is not equal to
    /// anything and contains nothing, as in Amplify).
    private func negatable(_ found: SQLQueryString, on column: SQLQueryString, negated: Bool) -> SQLQueryString {
        negated ? "(\(column) IS NULL OR NOT (\(found)))" : found
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
