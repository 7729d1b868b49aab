import GraphQL
import KizunaCore
import OrderedCollections

/// A client's subscription to one model's changes, parsed and checked once, when it subscribes: what
/// ``SubscriptionMatcher`` decides every change on, with no work per change beyond the decision.
///
/// The document has Amplify's shape: one root field, `onCreateX`, `onUpdateX` or `onDeleteX`, with an optional
/// `filter` (`ModelSubscriptionXFilterInput`, the list filter's grammar) and Kizuna's `since`, the `seq` to resume
/// after (a delivery's `extensions.seq`, as a decimal string). What it selects on the record is what every delivery
/// sends, executed by GraphQL with the record as the root field's value.
///
/// Nothing in it depends on who subscribed: subscribers sending the same document with the same variables share one
/// (the runtime keeps it by its ``key``), and only the check of each caller's read rules is made again.
final class SubscriptionRequest: Sendable {
    /// Which changes of the model: a record created (the first version), changed, or deleted (its tombstone).
    enum Kind: String, Sendable, CaseIterable {
        case create, update, delete

        /// `created`, `updated`, `deleted`, for descriptions.
        var pastTense: String { rawValue + "d" }
    }

    /// The model subscribed to.
    let model: DataModel
    /// Which of its changes.
    let kind: Kind
    /// The `filter` argument, checked and compiled for memory (``DataFilter/matches(_:)``); it matches every record
    /// when the argument is left out.
    let filter: DataFilter
    /// The `seq` to resume after; `nil` to start with the next change.
    let since: Int64?
    /// The document, which every delivery is executed with.
    let document: Document
    /// The operation to run, when the document has several.
    let operationName: String?
    /// The request's variables, as GraphQL values.
    let variables: [String: Map]
    /// Names what every delivery of this request sends whoever subscribed, when that depends on the change alone:
    /// the document selects only fields of the record itself (no relation, whose records each caller's rules decide,
    /// and no fragment), so one execution serves every subscriber with the same document and variables. `nil`
    /// otherwise: each subscriber's delivery is executed for it.
    let sharedKey: String?
    /// The document, operation name and variables it was parsed from, in one text.
    let key: String

    private init(
        model: DataModel, kind: Kind, filter: DataFilter, since: Int64?, document: Document, operationName: String?, variables: [String: Map],
        key: String, shared: Bool
    ) {
        self.model = model
        self.kind = kind
        self.filter = filter
        self.since = since
        self.document = document
        self.operationName = operationName
        self.variables = variables
        self.key = key
        sharedKey = shared ? key : nil
    }

    /// Parses and checks a `subscribe` payload for `caller`, on the app's live data API.
    ///
    /// The document is admitted as a query is (size, shape, validation, cost: ``GraphQLLimits``), must select one
    /// subscription operation with one root field, and its arguments are coerced by GraphQL itself (the document is
    /// executed once against a probe that keeps them), so variables and defaults read exactly as each delivery will
    /// read them. A caller no read rule of the model can ever let in is refused now, as a query would be.
    /// - Parameters:
    ///   - query: The payload's `query`.
    ///   - variables: The payload's `variables`.
    ///   - operationName: The payload's `operationName`.
    ///   - caller: Who subscribes.
    ///   - runtime: The app's data API at its live schema version.
    ///   - limits: The limits queries are admitted under.
    /// - Throws: ``SubscriptionRefusal`` with the errors to answer with: a document that does not parse, breaks a
    ///   limit or fails validation; an operation that is not a subscription, or selects other than one root field;
    ///   a bad `filter` (`validation_failed` with every problem in `details`, as a list query answers) or `since`;
    ///   `unauthorized` or `forbidden` when no read rule can let the caller in. Anything else is the server's.
    static func parse(
        query: String, variables: [String: JSONValue], operationName: String?, caller: DataCaller, on runtime: DataRuntime,
        limits: GraphQLLimits = GraphQLLimits()
    ) async throws -> SubscriptionRequest {
        let variablesText = String(decoding: JSONValue.object(variables).jsonBytes, as: UTF8.self)
        let key = [query, operationName ?? "", variablesText].joined(separator: "\u{0}")
        if let known = runtime.subscriptionRequests.value(key) {
            do {
                _ = try runtime.readable(known.model, caller: caller)
            } catch {
                throw SubscriptionRefusal(error)
            }
            return known
        }
        let request = try await parse(
            key: key, query: query, variables: variables, operationName: operationName, caller: caller, on: runtime, limits: limits)
        runtime.subscriptionRequests.keep(request, for: key)
        return request
    }

    private static func parse(
        key: String, query: String, variables: [String: JSONValue], operationName: String?, caller: DataCaller, on runtime: DataRuntime,
        limits: GraphQLLimits
    ) async throws -> SubscriptionRequest {
        let schema = try runtime.schema()
        let admission = limits.admit(query, operationName: operationName, variables: variables, schema: schema, cache: runtime.documents)
        guard case .admitted(let document, _) = admission else { throw SubscriptionRefusal(admission.errors) }
        guard let operation = GraphQLLimits.operation(in: document, named: operationName) else {
            let message =
                operationName.map { "The document has no operation named \($0)." }
                ?? "The document holds several operations; name the one to subscribe with operationName."
            throw SubscriptionRefusal(message)
        }
        guard operation.operation == .subscription else {
            throw SubscriptionRefusal(
                "The operation is a \(operation.operation.rawValue), not a subscription; queries and mutations are sent with POST.",
                nodes: [operation])
        }
        let fields = rootFields(of: operation.selectionSet.selections, in: document)
        guard fields.count == 1, let field = fields.values.first?.first else {
            let names = fields.keys.joined(separator: ", ")
            throw SubscriptionRefusal(
                "A subscription selects exactly one root field (onCreateX, onUpdateX or onDeleteX); this one selects \(fields.count): \(names).",
                nodes: [operation])
        }
        guard let found = event(named: field.name.value, in: runtime.data) else {
            throw SubscriptionRefusal("\(field.name.value) is not a subscription to a model's changes.", nodes: [field])
        }
        let (model, kind) = found
        let graphQLVariables = variables.mapValues(DataRecords.map)
        let arguments = try await coercedArguments(
            document, schema: schema, variables: graphQLVariables, operationName: operationName, caller: caller)
        do {
            _ = try runtime.readable(model, caller: caller)
            let filter = try DataFilter(
                arguments["filter"], model: model, schema: runtime.data, table: DataTables.table(app: runtime.app, model: model.name),
                dialect: runtime.dialect)
            return SubscriptionRequest(
                model: model, kind: kind, filter: filter, since: try since(arguments["since"]), document: document, operationName: operationName,
                variables: graphQLVariables, key: key, shared: isShared(operation, field))
        } catch {
            throw SubscriptionRefusal(error)
        }
    }

    /// Whether deliveries can be shared (``sharedKey``): the operation selects the root field directly and, on the
    /// record, only leaf fields without directives.
    private static func isShared(_ operation: OperationDefinition, _ field: Field) -> Bool {
        guard operation.selectionSet.selections.count == 1, operation.selectionSet.selections.first is Field,
            let selections = field.selectionSet?.selections
        else { return false }
        return selections.allSatisfy { ($0 as? Field).map { $0.selectionSet == nil && $0.directives.isEmpty } ?? false }
    }

    /// The model and kind of change a root field subscribes to: `onUpdateMessage` is `Message`'s updates.
    static func event(named field: String, in data: DataSchema) -> (DataModel, Kind)? {
        for model in data.models {
            let names = ClientNames(model: model.name)
            if field == names.onCreate { return (model, .create) }
            if field == names.onUpdate { return (model, .update) }
            if field == names.onDelete { return (model, .delete) }
        }
        return nil
    }

    /// `since` as a seq: a decimal string of digits (a JSON number would lose precision past 2^53).
    private static func since(_ value: JSONValue?) throws(KizunaError) -> Int64? {
        guard let value, value != .null else { return nil }
        guard case .string(let text) = value, !text.isEmpty, text.utf8.allSatisfy({ (48...57).contains($0) }), let seq = Int64(text) else {
            throw KizunaError(
                .validationFailed, "since must be a seq, the decimal string a delivery's extensions.seq holds, such as \"42\".", field: "since")
        }
        return seq
    }

    /// The root fields an operation selects, by response key, through fragments (each spread once), as written:
    /// `@skip` and `@include` are not evaluated, so a document cannot hide a second field behind a variable.
    private static func rootFields(of selections: [any Selection], in document: Document) -> OrderedDictionary<String, [Field]> {
        var fragments: [String: FragmentDefinition] = [:]
        for case let fragment as FragmentDefinition in document.definitions { fragments[fragment.name.value] = fragment }
        var fields: OrderedDictionary<String, [Field]> = [:]
        var spread: Set<String> = []
        func collect(_ selections: [any Selection]) {
            for selection in selections {
                switch selection {
                case let field as Field:
                    fields[(field.alias ?? field.name).value, default: []].append(field)
                case let inline as InlineFragment:
                    collect(inline.selectionSet.selections)
                case let fragmentSpread as FragmentSpread:
                    let name = fragmentSpread.name.value
                    guard spread.insert(name).inserted, let fragment = fragments[name] else { continue }
                    collect(fragment.selectionSet.selections)
                default:
                    continue
                }
            }
        }
        collect(selections)
        return fields
    }

    /// The root field's arguments as GraphQL coerces them for `variables`, found by executing the document once with
    /// a ``SubscriptionProbe`` as the root value: the field's resolver hands the probe its arguments instead of
    /// resolving a record. Variables GraphQL refuses (a wrong type, a required one missing) are the refusal.
    private static func coercedArguments(
        _ document: Document, schema: GraphQLSchema, variables: [String: Map], operationName: String?, caller: DataCaller
    ) async throws -> [String: JSONValue] {
        let probe = SubscriptionProbe()
        let result = try await GraphQL.execute(
            schema: schema, documentAST: document, rootValue: probe, context: DataRequest(caller: caller, notes: RequestNotes()),
            variableValues: variables, operationName: operationName)
        guard result.errors.isEmpty else { throw SubscriptionRefusal(result.errors) }
        return DataRecords.json(probe.arguments).objectValue ?? [:]
    }
}

/// Why a subscribe payload was refused: the errors to answer it with (a graphql-transport-ws `error` message), each
/// written by ``GraphQLExecutor/json(_:unexpected:)`` as a query's errors are, with a stable `extensions.code`.
struct SubscriptionRefusal: Error, Sendable {
    let errors: [GraphQLError]

    init(_ errors: [GraphQLError]) {
        self.errors = errors
    }

    /// A problem with the document (`validation_failed`), located at `nodes`.
    init(_ message: String, nodes: [any Node] = []) {
        errors = [GraphQLError(message: message, nodes: nodes)]
    }

    /// A Kizuna error, answered with its code, field and details.
    init(_ error: KizunaError) {
        errors = [GraphQLError(message: error.message, originalError: error)]
    }

    /// The errors as JSON, as they are sent.
    func json() throws -> [JSONValue] {
        try errors.map { error in
            try GraphQLExecutor.json(error) { _ in "The subscription could not be checked." }
        }
    }
}
