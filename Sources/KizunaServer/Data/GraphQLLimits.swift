import GraphQL
import KizunaCore
import Synchronization

/// How large a GraphQL request may be, each limit checked before the work it bounds: the document's size before it
/// is parsed, its shape (depth, aliases, selections) before it is validated, and what the operation that runs would
/// do (mutations, page sizes, cost) before anything runs.
///
/// Every refusal is one GraphQL error with `extensions.code` `limit_exceeded`, plus `limit` (which one: ``Limit``),
/// `maximum` and `actual`. One code rather than one per limit: a client's answer to all of them is the same — make
/// the request smaller, since retrying it as is cannot succeed — so an app switches on one code (and the SDK's table
/// grows by one), while `limit` and the numbers say exactly what to shrink, and the message says it in words.
package struct GraphQLLimits: Sendable, Hashable {
    /// Fields nested in fields, at most, counted through fragment spreads as they will run; introspection
    /// (`__schema`, `__type`) is not counted.
    package var maximumDepth = 10
    /// Aliased fields the operations reach, at most.
    package var maximumAliases = 30
    /// Selections the walk may visit: a bound on the work of a document whose fragments spread each other many times.
    package var maximumSelections = 10_000
    /// The most the operation that runs may cost: each field 1, and a list field multiplies what it selects by its
    /// page size (see ``OperationSize/cost``).
    ///
    /// 50,000 admits a feed of 100 messages, each with its room and a page of 100 of the room's members (about
    /// 31,000: 100 × (the message's fields + its room's + 100 × a member's)), or a page of 1000 records with a few
    /// dozen fields each; it refuses three nested default pages (100 × 100 × 100 rows, a million) and a page of 1000
    /// with a page of 100 under each record (at least 200,000).
    package var maximumCost = 50_000
    /// Root mutation fields in the operation that runs, at most: a client's outbox flushes several writes in one
    /// request (each runs in its own transaction, in order), but a few thousand would hold the connection for long.
    package var maximumMutationsPerRequest = 25
    /// The most bytes (UTF-8) the query text may have. Values belong in `variables`, which only the request body
    /// limit bounds; 64 KiB is many times the largest operation codegen writes, and bounds what the parser reads.
    package var maximumDocumentBytes = 64 * 1024
    /// The most records one page may ask for: ``KeysetPage/maximumLimit``, a bound of the store's, not a setting.
    package var maximumPageSize: Int { KeysetPage.maximumLimit }

    package init() {}

    /// Which limit a request broke: `extensions.limit` of the error.
    package enum Limit: String, Sendable, Hashable, CaseIterable {
        case depth, aliases, selections, cost, mutations, documentSize, pageSize
    }

    /// A limit a request broke, with the maximum and what the request had.
    package struct Exceeded: Error, Sendable, Hashable {
        package var limit: Limit
        package var maximum: Int
        /// What the request had; for ``Limit/selections`` the count where the walk stopped, just over the maximum.
        package var actual: Int
        /// Says which limit, the two numbers, and what to do.
        package var message: String

        /// The GraphQL error the request is answered with.
        var graphQLError: GraphQLError {
            GraphQLError(
                message: message, locations: [],
                extensions: [
                    "code": .string(KizunaError.Code.limitExceeded.rawValue), "limit": .string(limit.rawValue),
                    "maximum": .number(Number(maximum)), "actual": .number(Number(actual)),
                ])
        }
    }

    /// A request's document, admitted to run or refused.
    enum Admission {
        /// Parsed, within every limit and valid; `size` is what the operation that runs would do (`nil` when the
        /// request does not select one operation, which execution refuses).
        case admitted(Document, size: OperationSize?)
        /// Over a limit.
        case exceeded(Exceeded)
        /// Not parsed or not valid: what the parser or validation found.
        case refused([GraphQLError])

        /// The errors to answer with; none when admitted.
        var errors: [GraphQLError] {
            switch self {
            case .admitted: []
            case .exceeded(let exceeded): [exceeded.graphQLError]
            case .refused(let errors): errors
            }
        }
    }

    /// Parses, checks and validates a request's document, in the order that bounds the work.
    /// - Parameters:
    ///   - query: The request's query text.
    ///   - operationName: The operation to run, when the document has several.
    ///   - variables: The request's variables (page sizes may come from them).
    ///   - schema: The app's schema, to validate against and to know which fields return a page.
    ///   - cache: Documents already parsed, checked and validated against this schema, by their text: apps send the
    ///     same few documents again and again, and parsing and validating them is most of a small request's work.
    func admit(
        _ query: String, operationName: String?, variables: [String: JSONValue], schema: GraphQLSchema, cache: DocumentCache? = nil
    ) -> Admission {
        if let exceeded = check(documentBytes: query.utf8.count) { return .exceeded(exceeded) }
        let document: Document
        let paged: PagedFields
        if let known = cache?.value(query) {
            (document, paged) = (known.document, known.paged)
        } else {
            do {
                document = try parse(source: Source(body: query, name: "GraphQL request"))
            } catch let error as GraphQLError {
                return .refused([error])
            } catch {
                return .refused([GraphQLError(message: "The document could not be parsed.", locations: [])])
            }
            if let exceeded = check(document) { return .exceeded(exceeded) }
            paged = PagedFields()
            let invalid = validate(schema: schema, ast: document, rules: specifiedRules + [paged.rule])
            guard invalid.isEmpty else { return .refused(invalid) }
            cache?.keep(PreparedDocument(document: document, paged: paged), for: query)
        }
        guard let operation = Self.operation(in: document, named: operationName) else { return .admitted(document, size: nil) }
        let size = OperationSize(operation, in: document, variables: variables, paged: paged)
        if let exceeded = check(size) { return .exceeded(exceeded) }
        return .admitted(document, size: size)
    }

    /// The query text's size, before it is parsed.
    func check(documentBytes: Int) -> Exceeded? {
        guard documentBytes > maximumDocumentBytes else { return nil }
        return Exceeded(
            limit: .documentSize, maximum: maximumDocumentBytes, actual: documentBytes,
            message: """
                The GraphQL document is \(documentBytes) bytes; at most \(maximumDocumentBytes) are allowed. \
                Pass values in variables rather than in the query text.
                """)
    }

    /// What the operation that runs would do: mutations first (the cheapest to count), then page sizes (more
    /// precise than the cost they also raise), then the cost.
    func check(_ size: OperationSize) -> Exceeded? {
        if size.mutations > maximumMutationsPerRequest {
            return Exceeded(
                limit: .mutations, maximum: maximumMutationsPerRequest, actual: size.mutations,
                message: """
                    The operation runs \(size.mutations) mutations; at most \(maximumMutationsPerRequest) are allowed in one \
                    request. Send the rest in another request; nothing of this one ran.
                    """)
        }
        if let page = size.largestPage, page.size > maximumPageSize {
            return Exceeded(
                limit: .pageSize, maximum: maximumPageSize, actual: page.size,
                message: "\(page.field) asks for a page of \(page.size) records; at most \(maximumPageSize) are allowed. Page with nextToken.")
        }
        if size.cost > maximumCost {
            return Exceeded(
                limit: .cost, maximum: maximumCost, actual: size.cost,
                message: """
                    The query costs \(size.cost); at most \(maximumCost) is allowed. Each field costs 1 and a list field \
                    multiplies what it selects by its limit (\(KeysetPage.defaultLimit) when not given): ask for smaller \
                    pages or fewer nested lists.
                    """)
        }
        return nil
    }

    /// The operation execution will run: the one named `name`, or the only one. `nil` when there is none, or several
    /// and no name: execution refuses those requests itself, so nothing of theirs runs.
    static func operation(in document: Document, named name: String?) -> OperationDefinition? {
        let operations = document.definitions.compactMap { $0 as? OperationDefinition }
        guard let name else { return operations.count == 1 ? operations[0] : nil }
        return operations.first { $0.name?.value == name }
    }
}

/// Values kept per request text (a document, a plan), held by a schema's ``DataRuntime`` so a new schema version
/// starts empty. At most ``capacity`` texts of at most ``maximumBytes`` each: when full it starts over, which bounds
/// its memory whatever a client sends.
final class TextCache<Value: Sendable>: Sendable {
    /// The most texts kept.
    static var capacity: Int { 500 }
    /// The longest text kept, in UTF-8 bytes: big documents are rare and would crowd out the common ones.
    static var maximumBytes: Int { 16 * 1024 }

    private let values = Mutex<[String: Value]>([:])

    func value(_ text: String) -> Value? {
        values.withLock { $0[text] }
    }

    func keep(_ value: Value, for text: String) {
        guard text.utf8.count <= Self.maximumBytes else { return }
        values.withLock { values in
            if values.count >= Self.capacity { values.removeAll(keepingCapacity: true) }
            values[text] = value
        }
    }
}

/// A document that parsed, passed the shape limits and validated against the runtime's schema, with the fields
/// validation noted as pages. The GraphQL package's AST is not marked `Sendable`, but it is made of immutable values
/// (structs of `let`s and arrays), so a shared one is only ever read.
struct PreparedDocument: @unchecked Sendable {
    let document: Document
    let paged: GraphQLLimits.PagedFields
}

/// Valid documents by their text.
typealias DocumentCache = TextCache<PreparedDocument>
