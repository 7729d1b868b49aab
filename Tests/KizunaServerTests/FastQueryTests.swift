import GraphQL
import KizunaCore
import Testing

@testable import KizunaServer

/// Plans answer exactly what GraphQL's executor answers for the documents they take, and leave every other
/// document, and every request that would be an error, to the executor.
@Suite("Fast queries")
struct FastQueryTests {
    /// The plan's data for `query`, or `nil` when it takes no plan or hands the request back.
    static func planned(
        _ fixture: RelationFixture, _ query: String, as caller: DataCaller, variables: [String: JSONValue] = [:]
    ) async throws -> JSONValue? {
        let document = try parse(source: Source(body: query, name: "test"))
        guard let plan = FastQuery.plan(document, operationName: nil, data: fixture.runtime.data) else { return nil }
        return await plan.run(on: fixture.runtime, variables: variables, caller: caller, notes: RequestNotes())
    }

    static let documents: [(query: String, variables: [String: JSONValue])] = [
        ("{ listMessages(limit: 2) { items { id text owner roomId createdAt updatedAt _version _deleted __typename } nextToken __typename } }", [:]),
        ("{ listMessages(limit: 100, sortDirection: DESC) { items { id } nextToken } }", [:]),
        (#"{ a: getMessage(id: "m-r1-1") { id t: text __typename } b: getMessage(id: "nope") { id } }"#, [:]),
        (#"{ listMessages(filter: { text: { beginsWith: "alice" } }, limit: 3) { items { id text } nextToken } }"#, [:]),
        (
            "query($room: ID!, $n: Int, $dir: ModelSortDirection) { listMessagesByRoom(roomId: $room, limit: $n, sortDirection: $dir) { items { id text } nextToken } }",
            ["room": "r1", "n": 1, "dir": "DESC"]
        ),
        ("query($n: Int = 2) { listRooms(limit: $n) { items { id name members } nextToken } }", [:]),
        ("query($n: Int) { listRooms(limit: $n) { items { id } } }", ["n": nil]),
    ]

    @Test(arguments: TestBackend.available)
    func plansAnswerWhatTheExecutorAnswers(_ backend: TestBackend) async throws {
        try await RelationTests.withRooms(backend) { fixture in
            for (query, variables) in Self.documents {
                let planned = try await Self.planned(fixture, query, as: RelationTests.alice, variables: variables)
                let executed = try await fixture.run(query, as: RelationTests.alice, variables: variables.mapValues(DataRecords.map))
                #expect(executed.problems == [], "\(query)")
                #expect(planned != nil, "\(query) takes a plan")
                #expect(planned == executed.data, "\(query)")
            }
        }
    }

    @Test(arguments: TestBackend.available)
    func whatAPlanDoesNotTakeGoesToTheExecutor(_ backend: TestBackend) async throws {
        try await RelationTests.withRooms(backend) { fixture in
            let untaken = [
                "{ listRooms { items { id messages { items { id } } } } }",  // a relation
                "{ listRooms { ...Page } } fragment Page on ModelRoomConnection { items { id } }",  // a fragment
                "query($s: Boolean!) { listRooms { items { id @include(if: $s) } } }",  // a directive
                "query($f: ModelRoomFilterInput) { listRooms(filter: $f) { items { id } } }",  // an input object variable
                "{ syncRooms { items { id } lastSeq } }",  // not a plan's root field
                "mutation { createRoom(input: { name: \"x\" }) { id } }",
            ]
            for query in untaken {
                let answer = try await Self.planned(fixture, query, as: RelationTests.alice, variables: ["s": true])
                #expect(answer == nil, "\(query)")
            }
            // Requests GraphQL answers with an error are handed back: a variable of the wrong type, a refusal.
            let page = "query($n: Int) { listRooms(limit: $n) { items { id } } }"
            let text = try await Self.planned(fixture, page, as: RelationTests.alice, variables: ["n": "5"])
            let fraction = try await Self.planned(fixture, page, as: RelationTests.alice, variables: ["n": 1.5])
            let anonymous = try await Self.planned(fixture, page, as: DataCaller.anonymous)
            let empty = try await Self.planned(fixture, "{ listRooms(limit: 0) { items { id } } }", as: RelationTests.alice)
            #expect(text == nil && fraction == nil && anonymous == nil && empty == nil)
        }
    }
}
