import GraphQL
import KizunaCore
import Synchronization

extension GraphQLLimits {
    /// The fields of one document that return a page — those with a `limit` argument: `listXs`, the index queries,
    /// `syncXs` and `@hasMany` fields — noted by where they start in the query text while the document is validated.
    ///
    /// Only the schema knows them (a page asked for without `limit` is still a page, of ``KeysetPage/defaultLimit``),
    /// and validation already pairs every field with its definition, fragments included; noting them there costs no
    /// second walk with the schema.
    final class PagedFields: Sendable {
        private let starts = Mutex<Set<Int>>([])

        /// A validation rule that notes them, to run with the specified rules; it reports nothing.
        var rule: @Sendable (ValidationContext) -> Visitor {
            { [self] context in
                Visitor(enter: { node, _, _, _, _ in
                    if let field = node as? Field, let start = field.loc?.start,
                        context.fieldDef?.args.contains(where: { $0.name == "limit" }) == true
                    {
                        self.starts.withLock { _ = $0.insert(start) }
                    }
                    return .continue
                })
            }
        }

        /// Whether `field` returns a page.
        func contains(_ field: Field) -> Bool {
            guard let start = field.loc?.start else { return false }
            return starts.withLock { $0.contains(start) }
        }
    }

    /// What an operation would do, counted from its text and the request's variables before it runs.
    package struct OperationSize: Sendable, Hashable {
        /// Each field costs 1, and a field that returns a page multiplies the cost of everything it selects by the
        /// page's size: its `limit` (a literal, or a variable's value, else the variable's default), or
        /// ``KeysetPage/defaultLimit`` when none is given. So `listNotes { items { id text } }` costs
        /// 1 + 100 × (1 + 2) = 301. Introspection (`__schema`, `__type`, `__typename`) costs nothing; a fragment
        /// costs what it selects wherever it is spread. `@skip` and `@include` are not evaluated: the cost is the
        /// most the operation could read. It stops growing at `Int.max`.
        package var cost = 0
        /// The operation's root fields when it is a mutation, through fragments, as written; 0 for a query.
        package var mutations = 0
        /// The largest page the operation asks for, and the field (by its alias when it has one) that asks.
        package var largestPage: Page?

        /// One field's page.
        package struct Page: Sendable, Hashable {
            package var field: String
            package var size: Int
        }

        /// Counts `operation` of `document`.
        /// - Parameters:
        ///   - variables: The request's variables.
        ///   - paged: The fields that return a page, noted while the document was validated.
        init(_ operation: OperationDefinition, in document: Document, variables: [String: JSONValue], paged: PagedFields) {
            var walk = CostWalk(operation: operation, document: document, variables: variables, paged: paged)
            cost = walk.cost(of: operation.selectionSet.selections)
            largestPage = walk.largestPage
            mutations = operation.operation == .mutation ? walk.rootFields(of: operation.selectionSet.selections, spreading: []) : 0
        }
    }
}

/// The walk behind ``GraphQLLimits/OperationSize``. Validation has run, so fragments do not spread themselves (a
/// cycle is still not followed), and the shape check bounded how many selections the spread document has.
private struct CostWalk {
    let paged: GraphQLLimits.PagedFields
    let variables: [String: JSONValue]
    /// The operation's variables' default values.
    var defaults: [String: any Value] = [:]
    var fragments: [String: FragmentDefinition] = [:]
    /// A fragment costs the same wherever it is spread (its pages' sizes come from the one operation's variables).
    var fragmentCosts: [String: Int] = [:]
    var spreading: Set<String> = []
    var largestPage: GraphQLLimits.OperationSize.Page?

    init(operation: OperationDefinition, document: Document, variables: [String: JSONValue], paged: GraphQLLimits.PagedFields) {
        self.paged = paged
        self.variables = variables
        for definition in operation.variableDefinitions {
            if let value = definition.defaultValue { defaults[definition.variable.name.value] = value }
        }
        for case let fragment as FragmentDefinition in document.definitions { fragments[fragment.name.value] = fragment }
    }

    mutating func cost(of selections: [any Selection]) -> Int {
        var total = 0
        for selection in selections {
            switch selection {
            case let field as Field:
                // Introspection and __typename read the schema, not records.
                if field.name.value.hasPrefix("__") { continue }
                var beneath = 0
                if let set = field.selectionSet { beneath = cost(of: set.selections) }
                if paged.contains(field) {
                    let size = pageSize(of: field)
                    if largestPage.map({ size > $0.size }) ?? true {
                        largestPage = .init(field: (field.alias ?? field.name).value, size: size)
                    }
                    // A limit under 1 is refused when the page is read; it never makes what is under it free.
                    beneath = Self.product(beneath, max(size, 1))
                }
                total = Self.sum(total, Self.sum(1, beneath))
            case let inline as InlineFragment:
                total = Self.sum(total, cost(of: inline.selectionSet.selections))
            case let spread as FragmentSpread:
                total = Self.sum(total, cost(ofFragment: spread.name.value))
            default:
                continue
            }
        }
        return total
    }

    private mutating func cost(ofFragment name: String) -> Int {
        if let known = fragmentCosts[name] { return known }
        guard let fragment = fragments[name], spreading.insert(name).inserted else { return 0 }
        let total = cost(of: fragment.selectionSet.selections)
        spreading.remove(name)
        fragmentCosts[name] = total
        return total
    }

    /// The page size `field` asks for: its `limit`, or the default page when it gives none (or `null`).
    private func pageSize(of field: Field) -> Int {
        guard let argument = field.arguments.first(where: { $0.name.value == "limit" }) else { return KeysetPage.defaultLimit }
        var value: (any Value)? = argument.value
        if let variable = value as? Variable {
            if let given = variables[variable.name.value] {
                // A value that is not a whole number fails GraphQL's coercion before anything runs.
                return given.numberValue.flatMap { Int(exactly: $0) } ?? KeysetPage.defaultLimit
            }
            value = defaults[variable.name.value]
        }
        return (value as? IntValue).flatMap { Int($0.value) } ?? KeysetPage.defaultLimit
    }

    /// Root fields as written, through fragments; `__typename` is not a mutation.
    func rootFields(of selections: [any Selection], spreading: Set<String>) -> Int {
        var count = 0
        for selection in selections {
            switch selection {
            case let field as Field:
                if !field.name.value.hasPrefix("__") { count += 1 }
            case let inline as InlineFragment:
                count += rootFields(of: inline.selectionSet.selections, spreading: spreading)
            case let spread as FragmentSpread:
                let name = spread.name.value
                guard !spreading.contains(name), let fragment = fragments[name] else { continue }
                count += rootFields(of: fragment.selectionSet.selections, spreading: spreading.union([name]))
            default:
                continue
            }
        }
        return count
    }

    static func sum(_ a: Int, _ b: Int) -> Int {
        let (result, overflow) = a.addingReportingOverflow(b)
        return overflow ? .max : result
    }

    static func product(_ a: Int, _ b: Int) -> Int {
        let (result, overflow) = a.multipliedReportingOverflow(by: b)
        return overflow ? .max : result
    }
}
