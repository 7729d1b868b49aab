import KizunaCore
import SQLKit

/// A list query's `filter` argument, checked against its model and compiled into one SQL condition with bound values.
///
/// The grammar is Amplify's, so an app's queries move over unchanged:
/// `{ <field>: { eq ne lt le gt ge between beginsWith contains notContains in notIn attributeExists }, and: [filter],
/// or: [filter], not: filter }`; everything in one object must hold. The condition runs in the database, before
/// `LIMIT`, so a page holds up to `limit` matching rows, never fewer because others were scanned (AppSync's `limit`
/// counts rows read before its filter, which is why its pages come back empty with a `nextToken`).
///
/// Values are converted to their stored form first (a DateTime becomes epoch milliseconds), so comparisons use the
/// column's own order. A field left unset is `NULL`: `ne`, `notContains` and `notIn` match it (as in Amplify, where
/// a missing attribute is not equal to anything), `not` holds where its filter's tests fail on it, and
/// `attributeExists` tests for it. `contains` and `beginsWith` are case-sensitive on both engines, and `%` or `_` in
/// their text mean themselves.
///
/// The filter is walked once into a ``FilterNode``, which both the SQL ``condition`` and the in-memory
/// ``matches(_:)`` (what a subscription decides each change on) are made from, so the two cannot accept different
/// filters or read one differently.
package struct DataFilter: Sendable {
    /// How deeply `and`, `or` and `not` may nest; the filter object itself is level 1.
    package static let maximumDepth = 10
    /// How many filters one `and` or `or` may list.
    package static let maximumItems = 50
    /// How many values one `in` or `notIn` may list.
    package static let maximumValues = 100
    /// How many operators the whole filter may hold, so no request costs the database more than a page should.
    package static let maximumConditions = 100

    /// The condition, or `nil` when the filter tests nothing (no filter, or `{}`): every row matches.
    package let condition: (any SQLExpression)?
    /// The checked filter, or `nil` when it tests nothing: what ``condition`` was written from and ``matches(_:)``
    /// evaluates.
    let node: FilterNode?
    /// The engine whose SQL ``matches(_:)`` answers as.
    package let dialect: DataTables.Dialect
    /// Every field the filter tests, once each, in the order the filter names them (keys sorted within an object).
    package let fields: [String]
    /// The tested fields that no index leads with (an index's partition key, `createdAt` or `id`): the query reads
    /// every row of the partition or table to test them, which the API says in `extensions` so the app's author can
    /// add an `@index`.
    package let unindexedFields: [String]

    /// Checks and compiles `filter`.
    /// - Parameters:
    ///   - filter: The `filter` argument as JSON; `nil` or `null` for none.
    ///   - model: The model listed.
    ///   - schema: The app's schema, whose enums say which values an enum field takes.
    ///   - table: The model's table, which qualifies every column (a list's `json_each` has columns of its own).
    ///   - dialect: The engine the SQL is for.
    ///   - argument: The argument's name, which problem paths start with: `filter`, or a mutation's `condition`
    ///     (the same grammar).
    /// - Throws: `validation_failed` for `argument`, listing every problem with its path (`filter.and[0].text.between`).
    package init(
        _ filter: JSONValue?, model: DataModel, schema: DataSchema, table: String, dialect: DataTables.Dialect, argument: String = "filter"
    ) throws(KizunaError) {
        var compiler = FilterCompiler(model: model, schema: schema, table: table, dialect: dialect)
        var node: FilterNode?
        if let filter, filter != .null {
            node = compiler.filter(filter, at: FilterPath(argument), depth: 1)
        }
        if compiler.conditions > Self.maximumConditions {
            compiler.problem(
                FilterPath(argument), "tests \(compiler.conditions) conditions; at most \(Self.maximumConditions) are allowed",
                code: "too_many_conditions")
        }
        try compiler.throwIfFailed(field: argument, summary: argument == "filter" ? "The filter is not valid" : "The \(argument) is not valid")
        self.node = node
        self.condition = node.map { compiler.sql($0) }
        self.dialect = dialect
        self.fields = compiler.fields
        let leading = Set(model.indexes.map(\.partitionKey) + ["createdAt", "id"])
        self.unindexedFields = compiler.fields.filter { !leading.contains($0) }
    }
}

/// A path into a filter argument, written `filter.and[0].text.between`, for problems.
struct FilterPath: Sendable, CustomStringConvertible {
    let description: String

    init(_ root: String) { description = root }

    /// The member `key`; a key that is not a GraphQL name is quoted, so the path stays readable.
    subscript(key: String) -> FilterPath {
        let plain =
            key.first.map { $0 == "_" || ($0.isASCII && $0.isLetter) } == true
            && key.allSatisfy { $0 == "_" || ($0.isASCII && ($0.isLetter || $0.isNumber)) }
        return FilterPath(plain ? "\(description).\(key)" : "\(description)[\(key.debugDescription)]")
    }

    /// The element `index`.
    subscript(index: Int) -> FilterPath { FilterPath("\(description)[\(index)]") }
}

/// Walks a filter once, checking it into a ``FilterNode`` and recording every problem, as ``DocumentReader`` does for
/// documents: a client fixing its query sees them all at once. It then writes nodes as SQL on ``table`` for
/// ``dialect`` (``sql(_:)``).
struct FilterCompiler {
    let model: DataModel
    let schema: DataSchema
    let table: String
    let dialect: DataTables.Dialect
    /// The problems found so far.
    private(set) var problems: [KizunaError.Detail] = []
    /// How many operators the filter holds.
    private(set) var conditions = 0
    /// The fields tested, once each.
    private(set) var fields: [String] = []

    /// More problems than this say nothing more to the client, and a hostile filter should not grow the answer.
    static let maximumProblems = 100

    init(model: DataModel, schema: DataSchema, table: String, dialect: DataTables.Dialect) {
        self.model = model
        self.schema = schema
        self.table = table
        self.dialect = dialect
    }

    /// Records a problem at `path`.
    mutating func problem(_ path: FilterPath, _ message: String, code: String) {
        if problems.count < Self.maximumProblems {
            problems.append(KizunaError.Detail(code: code, message: message, field: path.description))
        } else if problems.count == Self.maximumProblems {
            problems.append(KizunaError.Detail(code: "too_many_problems", message: "has more problems than these", field: path.description))
        }
    }

    /// Throws `validation_failed` about `field` (the argument checked), listing every problem, if there were any;
    /// the message is `summary` followed by the paths to check.
    func throwIfFailed(field: String?, summary: String) throws(KizunaError) {
        guard !problems.isEmpty else { return }
        let paths = problems.compactMap(\.field).reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        let shown = paths.prefix(5).joined(separator: ", ") + (paths.count > 5 ? ", …" : "")
        throw KizunaError(.validationFailed, "\(summary): check \(shown).", field: field, details: problems)
    }

    /// The column `name` of the model's table, qualified.
    func column(_ name: String) -> SQLQueryString {
        "\(ident: table).\(ident: name)"
    }

    /// One filter object: its field conditions and its `and`, `or` and `not`, all of which must hold; `nil` when it
    /// tests nothing (an empty object matches every row).
    mutating func filter(_ value: JSONValue, at path: FilterPath, depth: Int) -> FilterNode? {
        guard case .object(let members) = value else {
            problem(path, "must be an object of fields and and, or, not, not \(value.typeName)", code: "wrong_type")
            return nil
        }
        var parts: [FilterNode] = []
        // Keys in order, so the SQL (and its plan) and the problems are the same for the same filter.
        for key in members.keys.sorted() {
            guard let member = members[key] else { continue }
            switch key {
            case "and", "or":
                if let part = group(member, isAnd: key == "and", at: path[key], depth: depth) { parts.append(part) }
            case "not":
                guard depth < DataFilter.maximumDepth else {
                    problem(path[key], "nests deeper than \(DataFilter.maximumDepth) levels of and, or and not", code: "too_deep")
                    continue
                }
                if let inner = filter(member, at: path[key], depth: depth + 1) {
                    parts.append(.not(inner))
                } else {
                    parts.append(.nothing)  // the negation of an empty filter, which matches every row
                }
            default:
                if let part = field(key, member, at: path[key]) { parts.append(part) }
            }
        }
        return FilterNode.conjunction(parts)
    }

    /// An `and` or `or` list.
    private mutating func group(_ value: JSONValue, isAnd: Bool, at path: FilterPath, depth: Int) -> FilterNode? {
        guard case .array(let items) = value else {
            problem(path, "must be an array of filters, not \(value.typeName)", code: "wrong_type")
            return nil
        }
        guard !items.isEmpty else {
            // Refused rather than read as "all" or "none": a client that built an empty list almost always meant neither.
            problem(path, "must list at least one filter", code: "empty")
            return nil
        }
        if items.count > DataFilter.maximumItems {
            problem(path, "lists \(items.count) filters; at most \(DataFilter.maximumItems) are allowed", code: "too_many_items")
        }
        guard depth < DataFilter.maximumDepth else {
            problem(path, "nests deeper than \(DataFilter.maximumDepth) levels of and, or and not", code: "too_deep")
            return nil
        }
        var parts: [FilterNode] = []
        var matchesAll = false
        for (index, item) in items.enumerated() {
            if let part = filter(item, at: path[index], depth: depth + 1) {
                parts.append(part)
            } else {
                matchesAll = true
            }
        }
        // An empty filter matches every row: it adds nothing to an `and`, and makes an `or` match everything.
        if !isAnd && matchesAll { return nil }
        return isAnd ? FilterNode.conjunction(parts) : FilterNode.disjunction(parts)
    }

    /// The operators on one field, all of which must hold.
    private mutating func field(_ name: String, _ value: JSONValue, at path: FilterPath) -> FilterNode? {
        guard let field = model.field(named: name) else {
            if let relation = model.relation(named: name) {
                let hint =
                    relation.kind == .belongsTo
                    ? "filter on \(relation.references) instead" : "list \(relation.target) records by \(relation.references) instead"
                problem(path, "is a relation, not a stored field of \(model.name); \(hint)", code: "unknown_field")
            } else {
                problem(path, "is not a field of \(model.name); expected one of its fields, and, or, not", code: "unknown_field")
            }
            return nil
        }
        guard case .object(let operators) = value else {
            problem(path, "must be an object of operators such as { eq: … }, not \(value.typeName)", code: "wrong_type")
            return nil
        }
        guard !operators.isEmpty else {
            problem(path, "names no operator; expected one of \(FilterOperator.names(for: field))", code: "empty")
            return nil
        }
        if !fields.contains(name) { fields.append(name) }
        var parts: [FilterNode] = []
        for key in operators.keys.sorted() {
            guard let operand = operators[key] else { continue }
            guard let op = FilterOperator(rawValue: key) else {
                problem(path[key], "is not an operator; expected one of \(FilterOperator.names(for: field))", code: "unknown_operator")
                continue
            }
            conditions += 1
            if let part = condition(op, operand, on: field, at: path[key]) { parts.append(part) }
        }
        return FilterNode.conjunction(parts)
    }

    /// `parts` joined by `AND` or `OR` in parentheses; `nil` for none.
    static func joined(_ parts: [SQLQueryString], by joiner: String) -> SQLQueryString? {
        switch parts.count {
        case 0: return nil
        case 1: return parts[0]
        default:
            let separator = " \(joiner) "
            let list = parts.joined(separator: separator)
            return "(\(list))"
        }
    }
}
