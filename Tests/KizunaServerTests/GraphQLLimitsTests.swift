import KizunaCore
import Testing

@testable import KizunaServer

/// What the limits count, without a server: the cost of an operation (fields, pages multiplying what they select,
/// limits from literals, variables and defaults, fragments where spread, introspection free), its mutations, its
/// largest page, and the shape and size of its document.
@Suite("GraphQL limits")
struct GraphQLLimitsTests {
    typealias Page = GraphQLLimits.OperationSize.Page

    static func client() throws -> ClientSchema {
        try ClientSchema(try DataSchema(sdl: GraphQLEndpointTests.schema))
    }

    /// What the operation `query` runs would do; records an issue when the document is refused.
    static func size(
        _ query: String, operationName: String? = nil, variables: [String: JSONValue] = [:], limits: GraphQLLimits = GraphQLLimits()
    ) throws -> GraphQLLimits.OperationSize? {
        let client = try Self.client()
        switch limits.admit(query, operationName: operationName, variables: variables, schema: client.schema) {
        case .admitted(_, let size): return size
        case .exceeded(let exceeded): Issue.record("over a limit: \(exceeded.message)")
        case .refused(let errors): Issue.record("refused: \(errors)")
        }
        return nil
    }

    /// The limit `query` breaks, or `nil`.
    static func exceeded(
        _ query: String, variables: [String: JSONValue] = [:], limits: GraphQLLimits = GraphQLLimits()
    ) throws -> GraphQLLimits.Exceeded? {
        let client = try Self.client()
        let admission = limits.admit(query, operationName: nil, variables: variables, schema: client.schema)
        if case .refused(let errors) = admission { Issue.record("refused: \(errors)") }
        guard case .exceeded(let exceeded) = admission else { return nil }
        return exceeded
    }

    @Test func aPageMultipliesWhatItSelectsByItsLiteralLimit() throws {
        // 1 + 5 × (items 1 + id 1 + text 1 + nextToken 1)
        let size = try Self.size("{ listNotes(limit: 5) { items { id text } nextToken } }")
        #expect(size?.cost == 21)
        #expect(size?.largestPage == Page(field: "listNotes", size: 5))
        #expect(size?.mutations == 0)
        // An index or sync query is a page too; a getX is not.
        #expect(try Self.size("{ syncNotes(limit: 50) { items { id } lastSeq } }")?.cost == 151)
        #expect(try Self.size(#"{ getNote(id: "n1") { id text } }"#)?.cost == 3)
    }

    @Test func aPageWithoutALimitIsTheDefaultPage() throws {
        #expect(try Self.size("{ listNotes { items { id } } }")?.cost == 1 + 100 * 2)
        #expect(try Self.size("{ listNotes(limit: null) { items { id } } }")?.cost == 201)
        #expect(try Self.size("{ listNotes { items { id } } }")?.largestPage == Page(field: "listNotes", size: KeysetPage.defaultLimit))
    }

    @Test func aLimitMayComeFromAVariableOrItsDefault() throws {
        let query = "query($n: Int) { listNotes(limit: $n) { items { id } } }"
        #expect(try Self.size(query, variables: ["n": 7])?.cost == 1 + 7 * 2)
        #expect(try Self.size(query, variables: ["n": nil])?.cost == 201, "null asks for the default page")
        #expect(try Self.size(query)?.cost == 201)
        let defaulted = "query($n: Int = 3) { listNotes(limit: $n) { items { id } } }"
        #expect(try Self.size(defaulted)?.cost == 1 + 3 * 2)
        #expect(try Self.size(defaulted, variables: ["n": 9])?.cost == 1 + 9 * 2)
    }

    @Test func nestedPagesMultiply() throws {
        // messages: 1 + 20 × (items 1 + id 1 + room (1 + name 1)) = 81; listRooms: 1 + 10 × (items 1 + name 1 + 81) = 831
        let size = try Self.size("{ listRooms(limit: 10) { items { name messages(limit: 20) { items { id room { name } } } } } }")
        #expect(size?.cost == 831)
        #expect(size?.largestPage == Page(field: "messages", size: 20))
        // Deep enough, the product stops at Int.max instead of overflowing.
        func room(_ levels: Int) -> String {
            levels == 0 ? "name" : "messages(limit: 1000) { items { room { \(room(levels - 1)) } } }"
        }
        var deep = GraphQLLimits()
        deep.maximumDepth = 30
        deep.maximumCost = .max
        let huge = try Self.size("{ listRooms(limit: 1000) { items { \(room(6)) } } }", limits: deep)
        #expect(huge?.cost == Int.max)
        #expect(GraphQLLimits().check(try #require(huge))?.limit == .cost)
    }

    @Test func fragmentsCostWhatTheySelectWhereTheyAreSpread() throws {
        let spread = """
            { listRooms(limit: 10) { items { ...R } } other: listRooms(limit: 2) { items { ...R } } }
            fragment R on Room { name messages(limit: 20) { items { id room { name } } } }
            """
        // R costs 82 (name 1 + messages 81): 1 + 10 × 83 and 1 + 2 × 83.
        #expect(try Self.size(spread)?.cost == 831 + 167)
        #expect(try Self.size("{ listNotes(limit: 2) { items { ... on Note { id } } } }")?.cost == 1 + 2 * 2)
    }

    @Test func introspectionCostsNothing() throws {
        #expect(try Self.size("{ __schema { types { name fields { name type { name } } } } }")?.cost == 0)
        #expect(try Self.size(#"{ __type(name: "Note") { name } }"#)?.cost == 0)
        let mixed = try Self.size("{ __typename listNotes(limit: 1) { items { id __typename } } }")
        #expect(mixed?.cost == 1 + 1 * 2)
        #expect(try Self.size("{ __schema { queryType { name } } }")?.largestPage == nil)
    }

    @Test func mutationsAreTheRootFieldsOfTheOperationThatRuns() throws {
        let batch = """
            mutation { a: createNote(input: { text: "a" }) { id } b: createNote(input: { text: "b" }) { id } ...M __typename }
            fragment M on Mutation { deleteNote(input: { id: "x" }) { id } }
            """
        let size = try Self.size(batch)
        #expect(size?.mutations == 3 && size?.cost == 6)
        var limits = GraphQLLimits()
        limits.maximumMutationsPerRequest = 3
        #expect(limits.check(try #require(size)) == nil)
        limits.maximumMutationsPerRequest = 2
        let exceeded = limits.check(try #require(size))
        #expect(exceeded?.limit == .mutations && exceeded?.maximum == 2 && exceeded?.actual == 3)

        // Only the operation that runs is counted; with several and no name, execution refuses the request itself.
        let two = #"query A { listNotes { items { id } } } query B { getNote(id: "1") { id } }"#
        #expect(try Self.size(two, operationName: "B")?.cost == 2)
        #expect(try Self.size(two, operationName: "A")?.cost == 201)
        #expect(try Self.size(two) == nil)
        #expect(try Self.size(two, operationName: "C") == nil)
    }

    @Test func eachLimitSaysWhichItIsItsMaximumAndTheRequestsValue() throws {
        var limits = GraphQLLimits()
        limits.maximumCost = 200
        let cost = try Self.exceeded("{ listNotes { items { id } } }", limits: limits)
        #expect(cost?.limit == .cost && cost?.maximum == 200 && cost?.actual == 201)
        #expect(cost?.message.contains("201") == true && cost?.message.contains("200") == true)
        limits.maximumCost = 201
        #expect(try Self.exceeded("{ listNotes { items { id } } }", limits: limits) == nil)

        let page = try Self.exceeded("{ big: listNotes(limit: 1001) { items { id } } }")
        #expect(page?.limit == .pageSize && page?.maximum == 1000 && page?.actual == 1001 && page?.message.contains("big") == true)
        let variable = try Self.exceeded("query($n: Int) { listNotes(limit: $n) { items { id } } }", variables: ["n": 5000])
        #expect(variable?.limit == .pageSize && variable?.actual == 5000)
        #expect(try Self.exceeded("{ listNotes(limit: 1000) { items { id } } }") == nil)

        let deep =
            "{ listRooms { items { messages { items { room { messages { items { room { messages { items { room { name } } } } } } } } } } } }"
        let depth = try Self.exceeded(deep)
        #expect(depth?.limit == .depth && depth?.maximum == 10 && depth?.actual == 12)

        let aliases = try Self.exceeded("{ " + (0..<31).map { "a\($0): __typename" }.joined(separator: " ") + " }")
        #expect(aliases?.limit == .aliases && aliases?.maximum == 30 && aliases?.actual == 31)

        // Fragments that spread each other twice, six levels down: 3 × 2^6 - 1 = 191 selections once spread.
        limits.maximumSelections = 100
        let doubling = (1...6).map { "fragment F\($0) on Query { ...F\($0 - 1) ...F\($0 - 1) }" }.joined(separator: "\n")
        let selections = try Self.exceeded("{ ...F6 }\nfragment F0 on Query { __typename }\n" + doubling, limits: limits)
        #expect(selections?.limit == .selections && selections?.maximum == 100 && (selections?.actual ?? 0) > 100)
    }

    @Test func theDocumentSizeIsCountedInBytesBeforeItIsParsed() throws {
        let exact = "{ __typename }" + String(repeating: " ", count: 65_536 - 14)
        #expect(try Self.exceeded(exact) == nil)
        let over = try Self.exceeded(exact + " ")
        #expect(over?.limit == .documentSize && over?.maximum == 65_536 && over?.actual == 65_537)
        // 32,767 two-byte characters in a comment: under the limit in characters, over it in bytes.
        let accented = "# " + String(repeating: "é", count: 32_767) + "\n{ __typename }"
        #expect(try Self.exceeded(accented)?.actual == 65_551)
        // Text that is not GraphQL at all is still refused for its size, not parsed.
        #expect(try Self.exceeded(String(repeating: "{", count: 70_000))?.limit == .documentSize)
    }
}
