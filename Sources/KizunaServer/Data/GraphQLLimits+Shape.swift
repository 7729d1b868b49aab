import GraphQL

extension GraphQLLimits {
    /// The root fields that introspect the schema.
    static let introspection: Set<String> = ["__schema", "__type"]

    /// The first shape limit `document` breaks — depth, aliases, selections — or `nil`; checked before validation,
    /// whose work they bound.
    ///
    /// Depth is measured as the document runs: a fragment spread adds the fragment's depth where it is spread, so a
    /// deep query cannot hide in fragments. A fragment that spreads itself is not followed again (validation
    /// refuses the cycle afterwards). The walk stops after ``maximumSelections`` selections, so its work is bounded
    /// however the fragments spread each other; below that bound, depth and aliases are counted exactly.
    func check(_ document: Document) -> Exceeded? {
        var fragments: [String: FragmentDefinition] = [:]
        for case let fragment as FragmentDefinition in document.definitions { fragments[fragment.name.value] = fragment }
        var aliases = 0
        var deepest = 0
        var visited = 0
        func walk(_ selections: [any Selection], depth: Int, spreading: Set<String>) {
            deepest = max(deepest, depth)
            guard visited <= maximumSelections else { return }
            for selection in selections {
                visited += 1
                switch selection {
                case let field as Field:
                    if field.alias != nil { aliases += 1 }
                    // Introspection reads the schema, not records: its depth is the schema's (the standard query of
                    // codegen tools nests type references 11 deep), and it costs nothing per row.
                    if Self.introspection.contains(field.name.value) { continue }
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
        if deepest > maximumDepth {
            return Exceeded(
                limit: .depth, maximum: maximumDepth, actual: deepest,
                message: "The document nests fields \(deepest) deep; at most \(maximumDepth) are allowed.")
        }
        if aliases > maximumAliases {
            return Exceeded(
                limit: .aliases, maximum: maximumAliases, actual: aliases,
                message: "The document uses \(aliases) aliases; at most \(maximumAliases) are allowed.")
        }
        if visited > maximumSelections {
            return Exceeded(
                limit: .selections, maximum: maximumSelections, actual: visited,
                message: "The document selects more than \(maximumSelections) fields once its fragments are spread.")
        }
        return nil
    }
}
