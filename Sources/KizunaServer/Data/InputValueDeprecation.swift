import GraphQL
import KizunaCore

/// Answers `__InputValue.isDeprecated` in introspection, which the GraphQL package (4.3.0) declares `Boolean!` but
/// cannot resolve: its argument and input-field definitions have no such property, so the field comes back null and
/// the whole introspection answer fails ("Cannot return null for non-nullable field __InputValue.isDeprecated").
/// The standard introspection query of gql and graphql-core 3.3 asks for it; so do recent codegen tools.
///
/// Before running, each such selection is rewritten to select `deprecationReason` under a marked alias; after, each
/// marked key is put back under its own name, `true` when a reason is set. Only selections on input values inside
/// introspection are touched (the fields `args` and `inputFields` under `__schema` or `__type`, and fragments on
/// `__InputValue`), so a model's own fields never are.
enum InputValueDeprecation {
    /// The alias prefix of a rewritten selection; the rest is the response key it stands for.
    static let marker = "__kzInputValueIsDeprecated_"

    /// The document's text with every `isDeprecated` of an input value rewritten, or `nil` when it selects none.
    static func rewrite(_ document: Document, source: String) -> String? {
        var found: [(range: Range<Int>, key: String)] = []
        func walk(_ selections: [any Selection], introspection: Bool, inputValue: Bool) {
            for selection in selections {
                switch selection {
                case let field as Field:
                    let name = field.name.value
                    if inputValue, name == "isDeprecated", let loc = field.loc {
                        found.append((loc.start..<loc.end, field.alias?.value ?? name))
                        continue
                    }
                    let inside = introspection || name == "__schema" || name == "__type"
                    if let set = field.selectionSet {
                        walk(set.selections, introspection: inside, inputValue: inside && (name == "args" || name == "inputFields"))
                    }
                case let inline as InlineFragment:
                    let onInputValue = inline.typeCondition?.name.value == "__InputValue"
                    walk(inline.selectionSet.selections, introspection: introspection || onInputValue, inputValue: inputValue || onInputValue)
                default:
                    continue  // fragment spreads: their definitions are walked below, with their own type
                }
            }
        }
        for definition in document.definitions {
            if let operation = definition as? OperationDefinition {
                walk(operation.selectionSet.selections, introspection: false, inputValue: false)
            } else if let fragment = definition as? FragmentDefinition {
                let type = fragment.typeCondition.name.value
                walk(fragment.selectionSet.selections, introspection: type.hasPrefix("__"), inputValue: type == "__InputValue")
            }
        }
        guard !found.isEmpty else { return nil }
        // Locations are UTF-8 offsets; replaced from the end so earlier offsets stay true.
        var bytes = Array(source.utf8)
        for (range, key) in found.sorted(by: { $0.range.lowerBound > $1.range.lowerBound }) {
            bytes.replaceSubrange(range, with: Array("\(marker)\(key): deprecationReason".utf8))
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `data` with each marked key back under its response key, as a Boolean.
    static func restore(_ data: JSONValue) -> JSONValue {
        switch data {
        case .array(let elements):
            return .array(elements.map(restore))
        case .object(let members):
            var restored: [String: JSONValue] = [:]
            for (key, value) in members {
                if key.hasPrefix(marker) {
                    restored[String(key.dropFirst(marker.count))] = .bool(value != .null)
                } else {
                    restored[key] = restore(value)
                }
            }
            return .object(restored)
        default:
            return data
        }
    }
}
