import GraphQL

/// How large a GraphQL document may be, checked before it is validated or run; a document over a limit is refused
/// with `limit_exceeded`.
package struct GraphQLLimits: Sendable, Hashable {
    /// Fields nested in fields, at most, counted through fragment spreads as they will run; introspection
    /// (`__schema`, `__type`) is not counted.
    package var maximumDepth = 10
    /// Aliased fields the operations reach, at most.
    package var maximumAliases = 30
    /// Selections the walk may visit: a bound on the work of a document whose fragments spread each other many times.
    package var maximumSelections = 10_000

    package init() {}

    /// The root fields that introspect the schema.
    private let introspection: Set<String> = ["__schema", "__type"]

    /// The first limit `document` breaks, as an error, or `nil`.
    ///
    /// Depth is measured as the document runs: a fragment spread adds the fragment's depth where it is spread, so a
    /// deep query cannot hide in fragments. A fragment that spreads itself is not followed again (validation
    /// refuses the cycle afterwards).
    func check(_ document: Document) -> GraphQLError? {
        var fragments: [String: FragmentDefinition] = [:]
        for case let fragment as FragmentDefinition in document.definitions { fragments[fragment.name.value] = fragment }
        var aliases = 0
        var deepest = 0
        var visited = 0
        func walk(_ selections: [any Selection], depth: Int, spreading: Set<String>) {
            deepest = max(deepest, depth)
            guard depth <= maximumDepth, visited <= maximumSelections else { return }
            for selection in selections {
                visited += 1
                switch selection {
                case let field as Field:
                    if field.alias != nil { aliases += 1 }
                    // Introspection reads the schema, not records: its depth is the schema's (the standard query of
                    // codegen tools nests type references 11 deep), and it costs nothing per row.
                    if introspection.contains(field.name.value) { continue }
                    if let set = field.selectionSet { walk(set.selections, depth: depth + 1, spreading: spreading) }
                case let inline as InlineFragment:
                    walk(inline.selectionSet.selections, depth: depth, spreading: spreading)
                case let spread as FragmentSpread:
                    let name = spread.name.value
                    guard !spreading.contains(name), let fragment = fragments[name] else { continue }
                    walk(fragment.selectionSet.selections, depth: depth, spreading: spreading.union([name]))
                default:
                    continue
                }
            }
        }
        for case let operation as OperationDefinition in document.definitions {
            walk(operation.selectionSet.selections, depth: 1, spreading: [])
        }
        let problem: String? =
            if deepest > maximumDepth {
                "The document nests fields \(deepest) deep; at most \(maximumDepth) are allowed."
            } else if aliases > maximumAliases {
                "The document uses \(aliases) aliases; at most \(maximumAliases) are allowed."
            } else if visited > maximumSelections {
                "The document selects more than \(maximumSelections) fields once its fragments are spread."
            } else {
                nil
            }
        return problem.map { GraphQLError(message: $0, locations: [], extensions: ["code": "limit_exceeded"]) }
    }
}
