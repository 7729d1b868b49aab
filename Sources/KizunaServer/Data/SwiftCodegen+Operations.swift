import Foundation
import GraphQL
import KizunaCore

extension SwiftCodegen {
    /// One variable of an operation: its GraphQL name and type, and the Swift parameter that fills it.
    struct Variable {
        var name: String
        var graphQLType: String
        var swiftType: String
        /// Whether the parameter may be left out (`nil`, not sent).
        var optional: Bool
        /// The parameter's label, when not its name (`_` for a mutation's input).
        var label: String? = nil
    }

    func operations() throws -> String {
        var out = SwiftWriter()
        for model in data.models {
            let names = ClientNames(model: model.name)
            let page = try pageVariables(model)
            // Each document interpolates the model's `selection`, so the fields are written once.
            let record = "\\(\(model.name).selection)"
            out.line("")
            out.line("extension \(model.name) {")
            operation(
                "get", summary: "The `\(model.name)` with this id, or `nil`.", kind: "query", field: names.get,
                variables: [Variable(name: "id", graphQLType: "ID!", swiftType: "String", optional: false)],
                result: "\(model.name)?", selection: record, into: &out)
            operation(
                "list", summary: "A page of `\(model.name)` records, by `createdAt` then `id`.", kind: "query", field: names.list,
                variables: page, result: "ModelPage<\(model.name)>", selection: "items { \(record) } nextToken", into: &out)
            for index in model.indexes {
                let field = names.list(by: index.name)
                let stem = String(field.dropFirst(names.list.count))  // ByRoom
                let sorted = index.sortKeys.isEmpty ? "" : ", sorted by `\(index.sortKeys.joined(separator: "`, `"))`"
                operation(
                    "list" + stem, summary: "A page of `\(model.name)` records of one `\(index.partitionKey)` (index `\(index.name)`)\(sorted).",
                    kind: "query", field: field, variables: try indexVariables(model, index) + page, result: "ModelPage<\(model.name)>",
                    selection: "items { \(record) } nextToken", into: &out)
            }
            let condition = Variable(
                name: "condition", graphQLType: try types.filter(model.name, condition: true).name, swiftType: "JSONValue", optional: true)
            for (action, field) in [("create", names.create), ("update", names.update), ("delete", names.delete)] {
                let input = action.prefix(1).uppercased() + action.dropFirst() + model.name + "Input"
                operation(
                    action, summary: "\(action.prefix(1).uppercased() + action.dropFirst())s a `\(model.name)`; answers the record as stored.",
                    kind: "mutation", field: field,
                    variables: [Variable(name: "input", graphQLType: input + "!", swiftType: input, optional: false, label: "_"), condition],
                    result: model.name, selection: record, into: &out)
            }
            let filter = Variable(name: "filter", graphQLType: try types.subscriptionFilter(model.name).name, swiftType: "JSONValue", optional: true)
            let since = Variable(name: "since", graphQLType: "String", swiftType: "String", optional: true)
            for (event, field) in [("onCreate", names.onCreate), ("onUpdate", names.onUpdate), ("onDelete", names.onDelete)] {
                operation(
                    event, summary: "Each `\(model.name)` \(event.dropFirst(2).lowercased())d that the caller may read (for `app.data.subscribe`).",
                    kind: "subscription", field: field, variables: [filter, since], result: model.name, selection: record, into: &out)
            }
            out.line("}")
            outbox(model, into: &out)
        }
        return out.text
    }

    /// A static function making a ``GraphQLOperation``.
    private func operation(
        _ name: String, summary: String, kind: String, field: String, variables: [Variable], result: String, selection: String,
        into out: inout SwiftWriter
    ) {
        let operationName = field.prefix(1).uppercased() + field.dropFirst()
        let declarations = variables.map { "$\($0.name): \($0.graphQLType)" }.joined(separator: ", ")
        let arguments = variables.map { "\($0.name): $\($0.name)" }.joined(separator: ", ")
        let document = "\(kind) \(operationName)(\(declarations)) { \(field)(\(arguments)) { \(selection) } }"
        let parameters = variables.map { variable in
            (variable.label.map { $0 + " " } ?? "") + "\(Self.identifier(variable.name)): \(variable.swiftType)\(variable.optional ? "? = nil" : "")"
        }
        if !out.text.hasSuffix("{\n") { out.line("") }
        out.line("    /// \(summary)")
        out.line("    public static func \(Self.identifier(name))(\(parameters.joined(separator: ", "))) -> GraphQLOperation<\(result)> {")
        // `__variables`: GraphQL names cannot start with `__`, so no parameter can be called that.
        out.line("        var __variables: [String: JSONValue] = [:]")
        for variable in variables {
            let value = Self.identifier(variable.name)
            if variable.optional {
                out.line("        if let \(value) { __variables[\(Self.literal(variable.name))] = \(value).graphQLValue }")
            } else {
                out.line("        __variables[\(Self.literal(variable.name))] = \(value).graphQLValue")
            }
        }
        out.line("        return GraphQLOperation(")
        out.line("            document: \"\(document.replacingOccurrences(of: "\"", with: "\\\""))\",")
        out.line("            variables: __variables, operationName: \(Self.literal(operationName)), field: \(Self.literal(field)))")
        out.line("    }")
    }

    /// `OutboxMutation.create(CreateMessageInput(…), parent:)` and the rest, selecting every field of the record.
    private func outbox(_ model: DataModel, into out: inout SwiftWriter) {
        out.line("")
        out.line("extension OutboxMutation {")
        for action in ["create", "update", "delete"] {
            let input = action.prefix(1).uppercased() + action.dropFirst() + model.name + "Input"
            if action != "create" { out.line("") }
            out.line(
                "    /// \(action.prefix(1).uppercased() + action.dropFirst())s a `\(model.name)` through the outbox; `parent` orders it with its group's."
            )
            out.line("    public static func \(action)(_ input: \(input), parent: String? = nil) -> OutboxMutation {")
            out.line(
                "        OutboxMutation(model: \(model.name).modelName, action: .\(action), input: input.graphQLValue.objectValue ?? [:], "
                    + "parent: parent, selection: \(model.name).selection)")
            out.line("    }")
        }
        out.line("}")
    }

    /// `filter`, `sortDirection`, `limit`, `nextToken`.
    private func pageVariables(_ model: DataModel) throws -> [Variable] {
        [
            Variable(name: "filter", graphQLType: try types.filter(model.name, condition: false).name, swiftType: "JSONValue", optional: true),
            Variable(name: "sortDirection", graphQLType: "ModelSortDirection", swiftType: "SortDirection", optional: true),
            Variable(name: "limit", graphQLType: "Int", swiftType: "Int", optional: true),
            Variable(name: "nextToken", graphQLType: "String", swiftType: "String", optional: true),
        ]
    }

    /// An index query's partition key (required) and a condition on its first sort key.
    private func indexVariables(_ model: DataModel, _ index: DataIndex) throws -> [Variable] {
        var variables: [Variable] = []
        if let key = model.field(named: index.partitionKey) {
            variables.append(
                Variable(
                    name: key.name, graphQLType: try types.namedType(key.type).name + "!", swiftType: swiftType(key, optional: false), optional: false
                ))
        }
        if let first = index.sortKeys.first, let key = model.field(named: first) {
            let element = swiftType(DataField(name: key.name, type: key.type), optional: false)
            variables.append(
                Variable(name: key.name, graphQLType: try types.keyCondition(key.type).name, swiftType: "KeyCondition<\(element)>", optional: true))
        }
        return variables
    }
}
