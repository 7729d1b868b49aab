import GraphQL
import KizunaCore
import OrderedCollections
import Synchronization

/// The commonest documents answered without GraphQL's executor: queries whose root fields are `getX`, `listXs` or an
/// index query, selecting only a model's stored fields (and `__typename`, `nextToken`), with no fragments or
/// directives, and variables of scalar and enum types only.
///
/// GraphQL's executor resolves every field of every record in a task of its own, with dynamic casts at each step;
/// for a page of 20 records that was most of a list request's time (`Benchmarks/RESULTS.md`). A plan reads the
/// same records through the same ``DataRuntime`` calls (the same rules, filters, pages and cursors) and projects the
/// selected fields itself.
///
/// It answers only when everything went as GraphQL would have answered without an error: a resolver that throws, a
/// variable it does not check as GraphQL would, or a required field that is null makes ``run(on:variables:caller:notes:)``
/// return `nil`, and the request runs through the executor, which reports it as GraphQL does. Reads are repeatable,
/// so running one twice is harmless.
struct FastQuery: @unchecked Sendable {  // the GraphQL AST it holds is immutable values, only ever read
    /// One root field.
    struct Root {
        enum Kind { case get, list(DataIndex?) }
        var key: String
        var kind: Kind
        var model: DataModel
        var arguments: [Argument]
        /// For `get`: the record's fields. For a list: the connection's (`items` holds the record's fields).
        var selection: [Selected]
    }

    /// A selected field: a stored field or `_deleted` (by name), `__typename`, or a page's `items`/`nextToken`.
    indirect enum Selected {
        case field(key: String, name: String)
        case typename(key: String, name: String)
        case items(key: String, [Selected])
        case nextToken(key: String)
    }

    let roots: [Root]
    let variables: [VariableDefinition]

    /// The plan of `document`'s operation, or `nil` when it is not one a plan answers.
    static func plan(_ document: Document, operationName: String?, data: DataSchema) -> FastQuery? {
        var operations: [OperationDefinition] = []
        for definition in document.definitions {
            guard let operation = definition as? OperationDefinition else { return nil }  // fragments: the executor's
            operations.append(operation)
        }
        let chosen = operationName.map { name in operations.filter { $0.name?.value == name } } ?? operations
        guard chosen.count == 1, let operation = chosen.first, operation.operation == .query, operation.directives.isEmpty else { return nil }
        for definition in operation.variableDefinitions {
            guard definition.directives.isEmpty, scalarName(definition.type, data: data) != nil else { return nil }
        }
        var roots: [Root] = []
        for selection in operation.selectionSet.selections {
            guard let field = selection as? Field, field.directives.isEmpty, let set = field.selectionSet,
                let (model, kind) = root(named: field.name.value, in: data)
            else { return nil }
            let selected: [Selected]?
            switch kind {
            case .get: selected = fields(set, of: model)
            case .list: selected = connection(set, of: model)
            }
            guard let selected else { return nil }
            roots.append(Root(key: field.alias?.value ?? field.name.value, kind: kind, model: model, arguments: field.arguments, selection: selected))
        }
        return roots.isEmpty ? nil : FastQuery(roots: roots, variables: operation.variableDefinitions)
    }

    /// The `data` of the answer, or `nil` to run the request through the executor instead.
    func run(on runtime: DataRuntime, variables given: [String: JSONValue], caller: DataCaller, notes: RequestNotes) async -> JSONValue? {
        guard let values = checked(given, data: runtime.data) else { return nil }
        var data: [String: JSONValue] = [:]
        for root in roots {
            var arguments = OrderedDictionary<String, Map>()
            for argument in root.arguments {
                guard let value = try? valueFromASTUntyped(valueAST: argument.value, variables: values) else { return nil }
                if value != .undefined { arguments[argument.name.value] = value }
            }
            do {
                switch root.kind {
                case .get:
                    let id = DataRecords.json(.dictionary(arguments))["id"]?.stringValue ?? ""
                    guard let record = try await runtime.get(root.model, id: id, caller: caller) else {
                        data[root.key] = .null
                        continue
                    }
                    guard let object = Self.project(record, root.selection, model: root.model) else { return nil }
                    data[root.key] = object
                case .list(let index):
                    let page = try await runtime.list(root.model, index: index, arguments: .dictionary(arguments), caller: caller, notes: notes)
                    guard let object = Self.project(page, root.selection, model: root.model) else { return nil }
                    data[root.key] = object
                }
            } catch {
                return nil
            }
        }
        return .object(data)
    }

    // MARK: Planning

    private static func root(named name: String, in data: DataSchema) -> (DataModel, Root.Kind)? {
        for model in data.models {
            let names = ClientNames(model: model.name)
            if name == names.get { return (model, .get) }
            if name == names.list { return (model, .list(nil)) }
            if let index = model.indexes.first(where: { names.list(by: $0.name) == name }) { return (model, .list(index)) }
        }
        return nil
    }

    /// A record's selection: stored fields, `_deleted` and `__typename`, nothing nested.
    private static func fields(_ set: SelectionSet, of model: DataModel) -> [Selected]? {
        var selected: [Selected] = []
        for selection in set.selections {
            guard let field = selection as? Field, field.directives.isEmpty, field.selectionSet == nil, field.arguments.isEmpty else { return nil }
            let name = field.name.value
            let key = field.alias?.value ?? name
            if name == "__typename" {
                selected.append(.typename(key: key, name: model.name))
            } else if name == DataTables.deletedColumn || model.field(named: name) != nil {
                selected.append(.field(key: key, name: name))
            } else {
                return nil  // a relation, or a field the validator let through that a plan does not know
            }
        }
        return selected
    }

    /// A page's selection: `items { … }`, `nextToken` and `__typename`.
    private static func connection(_ set: SelectionSet, of model: DataModel) -> [Selected]? {
        var selected: [Selected] = []
        for selection in set.selections {
            guard let field = selection as? Field, field.directives.isEmpty, field.arguments.isEmpty else { return nil }
            let key = field.alias?.value ?? field.name.value
            switch field.name.value {
            case "items":
                guard let set = field.selectionSet, let items = fields(set, of: model) else { return nil }
                selected.append(.items(key: key, items))
            case "nextToken": selected.append(.nextToken(key: key))
            case "__typename": selected.append(.typename(key: key, name: "Model\(model.name)Connection"))
            default: return nil
            }
        }
        return selected
    }

    /// The named type of a variable a plan checks itself: the built-in scalars and the schema's enums (sort
    /// directions); `nil` for lists and input objects, which the executor coerces.
    private static func scalarName(_ type: any Type, data: DataSchema) -> String? {
        switch type {
        case let nonNull as NonNullType: return scalarName(nonNull.type, data: data)
        case let named as NamedType:
            let name = named.name.value
            return ["Int", "String", "ID", "Boolean", "ModelSortDirection"].contains(name) || data.enumeration(named: name) != nil ? name : nil
        default: return nil
        }
    }

    // MARK: Running

    /// The variables as GraphQL would coerce them, defaults applied; `nil` when one is not what its type accepts
    /// (the executor then says why).
    private func checked(_ given: [String: JSONValue], data: DataSchema) -> [String: Map]? {
        var values: [String: Map] = [:]
        for definition in variables {
            let name = definition.variable.name.value
            let required = definition.type is NonNullType
            guard let value = given[name] else {
                if let fallback = definition.defaultValue {
                    guard let map = try? valueFromASTUntyped(valueAST: fallback) else { return nil }
                    values[name] = map
                } else if required {
                    return nil
                }
                continue
            }
            if value == .null {
                guard !required else { return nil }
                values[name] = .null
                continue
            }
            guard let typeName = Self.scalarName(definition.type, data: data) else { return nil }
            switch (typeName, value) {
            case ("Int", .number(let number)) where number.rounded() == number && number.magnitude <= Double(Int32.max):
                values[name] = .number(Number(Int(number)))
            case ("String", .string(let text)): values[name] = .string(text)
            case ("ID", .string(let text)): values[name] = .string(text)
            case ("ID", .number(let number)) where number.rounded() == number && number.magnitude <= 9_007_199_254_740_992:
                values[name] = .string(String(Int64(number)))
            case ("Boolean", .bool(let flag)): values[name] = .bool(flag)
            case ("ModelSortDirection", .string(let text)) where text == "ASC" || text == "DESC": values[name] = .string(text)
            case (_, .string(let text)) where data.enumeration(named: typeName)?.values.contains(text) == true: values[name] = .string(text)
            default: return nil
            }
        }
        return values
    }

    /// The selected fields of a record or a page, as JSON; `nil` when a required field is null (GraphQL would null
    /// the parent and report an error: the executor's to do).
    private static func project(_ source: [String: any Sendable], _ selection: [Selected], model: DataModel) -> JSONValue? {
        var object: [String: JSONValue] = [:]
        for selected in selection {
            switch selected {
            case .typename(let key, let name):
                object[key] = .string(name)
            case .nextToken(let key):
                object[key] = (source["nextToken"] as? String).map(JSONValue.string) ?? .null
            case .items(let key, let fields):
                guard let records = source["items"] as? [[String: any Sendable]] else { return nil }
                var items: [JSONValue] = []
                items.reserveCapacity(records.count)
                for record in records {
                    guard let item = project(record, fields, model: model) else { return nil }
                    items.append(item)
                }
                object[key] = .array(items)
            case .field(let key, let name):
                if let value = source[name] {
                    object[key] = DataRecords.json(outputValue: value)
                } else {
                    guard name != DataTables.deletedColumn, model.field(named: name)?.isRequired != true else { return nil }
                    object[key] = .null
                }
            }
        }
        return .object(object)
    }
}

/// A plan, or the knowledge that a document has none. `@unchecked`: it holds the GraphQL AST (see ``FastQuery``).
struct FastQueryEntry: @unchecked Sendable {
    let plan: FastQuery?
}

/// The plans of the documents a runtime has seen, by operation name and text, next to its ``DocumentCache``.
typealias FastQueryPlans = TextCache<FastQueryEntry>

extension TextCache where Value == FastQueryEntry {
    /// The plan of `query`'s chosen operation, made once per text and operation name.
    func plan(_ query: String, operationName: String?, document: Document, data: DataSchema) -> FastQuery? {
        let key = (operationName ?? "") + "\u{0}" + query
        if let entry = value(key) { return entry.plan }
        let made = FastQuery.plan(document, operationName: operationName, data: data)
        keep(FastQueryEntry(plan: made), for: key)
        return made
    }
}
