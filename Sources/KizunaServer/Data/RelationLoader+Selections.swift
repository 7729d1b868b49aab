import GraphQL
import KizunaCore
import OrderedCollections

extension RelationLoader {
    /// A relation field the records of a level are completed with.
    struct PlannedRelation {
        /// The relation.
        var relation: DataRelation
        /// Its first node, whose arguments the executor uses.
        var field: Field
        /// Its nodes in each selection of the level: what is selected on the related records.
        var selections: [[Field]]
        /// `false` when two selections of the same records name different fields or arguments under this response
        /// key: one stored answer cannot suit both, so each record's resolver loads its own.
        var isAgreed = true
    }

    /// The relation fields `selections` select on records of `model`, by response key.
    ///
    /// A level's records can be completed under several selections (a connection's `items` under two aliases). A
    /// response key that asks those records for two different things is left to its resolvers (`isAgreed` is false):
    /// the answers stay right, only unbatched, for a document that asks one name two ways.
    func plan(_ selections: [[Field]], on model: DataModel) -> OrderedDictionary<String, PlannedRelation> {
        var planned: OrderedDictionary<String, PlannedRelation> = [:]
        for nodes in selections {
            for (key, fields) in collect(nodes) {
                guard let first = fields.first else { continue }
                if var existing = planned[key] {
                    if !sameCall(existing.field, first) { existing.isAgreed = false }
                    existing.selections.append(fields)
                    planned[key] = existing
                } else if let relation = model.relation(named: first.name.value) {
                    planned[key] = PlannedRelation(relation: relation, field: first, selections: [fields])
                }
            }
        }
        return planned
    }

    /// The selections of a connection's items: in each selection of the connection, the nodes of each response key
    /// whose field is `items` (`a: items` and `b: items` complete the same records, each its own way).
    func itemSelections(_ connections: [[Field]]) -> [[Field]] {
        var selections: [[Field]] = []
        for nodes in connections {
            for (_, fields) in collect(nodes) where fields.first?.name.value == "items" { selections.append(fields) }
        }
        return selections
    }

    /// What the selection sets of `nodes` select, by response key, collected as the executor collects them: fragment
    /// spreads (each once) and inline fragments followed, `@skip` and `@include` applied, fields of one response key
    /// merged. Type conditions are not tested: every type here is an object type, and validation refuses a fragment
    /// spread where its type cannot apply.
    func collect(_ nodes: [Field]) -> OrderedDictionary<String, [Field]> {
        var fields: OrderedDictionary<String, [Field]> = [:]
        var spread: Set<String> = []
        for node in nodes {
            if let selectionSet = node.selectionSet { collect(selectionSet, into: &fields, spread: &spread) }
        }
        return fields
    }

    private func collect(_ selectionSet: SelectionSet, into fields: inout OrderedDictionary<String, [Field]>, spread: inout Set<String>) {
        for selection in selectionSet.selections {
            switch selection {
            case let field as Field:
                guard isIncluded(field.directives) else { continue }
                fields[field.alias?.value ?? field.name.value, default: []].append(field)
            case let inline as InlineFragment:
                guard isIncluded(inline.directives) else { continue }
                collect(inline.selectionSet, into: &fields, spread: &spread)
            case let fragmentSpread as FragmentSpread:
                let name = fragmentSpread.name.value
                guard isIncluded(fragmentSpread.directives), spread.insert(name).inserted, let fragment = fragments[name] else { continue }
                collect(fragment.selectionSet, into: &fields, spread: &spread)
            default:
                continue
            }
        }
    }

    /// Whether `@skip(if:)` and `@include(if:)` let a selection in, as the executor decides.
    private func isIncluded(_ directives: [Directive]) -> Bool {
        for directive in directives {
            let name = directive.name.value
            guard name == "skip" || name == "include", let argument = directive.arguments.first(where: { $0.name.value == "if" }) else { continue }
            let condition = try? valueFromASTUntyped(valueAST: argument.value, variables: variables)
            if name == "skip" && condition == .bool(true) { return false }
            if name == "include" && condition == .bool(false) { return false }
        }
        return true
    }

    /// A field's arguments as the document writes them, variables replaced; an argument whose variable was not given
    /// is left out, as the executor leaves it out.
    func arguments(of field: Field) -> Map {
        var arguments = OrderedDictionary<String, Map>()
        for argument in field.arguments {
            let value = (try? valueFromASTUntyped(valueAST: argument.value, variables: variables)) ?? .undefined
            if value != .undefined { arguments[argument.name.value] = value }
        }
        return .dictionary(arguments)
    }

    /// Whether two nodes ask for the same: one field, with equal arguments (in any order).
    private func sameCall(_ first: Field, _ second: Field) -> Bool {
        first.name.value == second.name.value && DataRecords.json(arguments(of: first)) == DataRecords.json(arguments(of: second))
    }
}
