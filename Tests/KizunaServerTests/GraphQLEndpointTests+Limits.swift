import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import Testing

@testable import KizunaServer

/// Each limit of the data API over HTTP: a request just over it is refused before any of it runs, with
/// `limit_exceeded`, the limit's name, its maximum and the request's value; one at the limit is served.
extension GraphQLEndpointTests {
    /// The refusal in `body` — the `extensions` of its one error — or `nil` when something ran (`data` came back).
    static func refusal(_ body: JSONValue) -> [String: JSONValue]? {
        guard body["data"] == nil, let errors = body["errors"]?.arrayValue, errors.count == 1 else { return nil }
        return errors[0]["extensions"]?.objectValue
    }

    /// The `extensions` of a refusal by `limit`.
    static func limitExceeded(_ limit: String, maximum: Int, actual: Int) -> [String: JSONValue] {
        ["code": "limit_exceeded", "limit": .string(limit), "maximum": .number(Double(maximum)), "actual": .number(Double(actual))]
    }

    /// `count` createNote mutations in one operation, each aliased.
    static func batch(_ count: Int) -> String {
        "mutation { " + (0..<count).map { #"m\#($0): createNote(input: { text: "\#($0)" }) { id }"# }.joined(separator: " ") + " }"
    }

    /// A query whose cost is 1 + n × 20,302: a page of n rooms, under each the default page of messages, under each
    /// message its room and the default page of that room's messages.
    static let roomsWithMessages = "listRooms(limit: $n) { items { messages { items { room { messages { items { id } } } } } } }"

    @Test func eachLimitRefusesJustOverAndServesJustUnder() async throws {
        try await withTestServer(configure: { configuration in
            configuration.passwordParameters = .init(logN: 10, r: 8, p: 1)
            configuration.graphQLLimits.maximumCost = 40_605
            configuration.graphQLLimits.maximumMutationsPerRequest = 3
            configuration.graphQLLimits.maximumDocumentBytes = 2048
            configuration.graphQLLimits.maximumSelections = 100
        }) { server in
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            #expect(try await DataSchemaPublishingTests.publish(server, Self.schema).status == .ok)
            let alice = try await Self.signUp(server, "alice@example.com")
            func send(_ query: String, _ variables: JSONValue? = nil) async throws -> JSONValue {
                let answer = try await Self.graphQL(server, query, variables: variables, token: alice.token)
                #expect(answer.status == .ok)
                return answer.body
            }

            // The query text, in bytes, before it is parsed.
            let exact = "{ __typename }" + String(repeating: " ", count: 2048 - 14)
            #expect(try await send(exact)["data"]?["__typename"] == "Query")
            #expect(Self.refusal(try await send(exact + " ")) == Self.limitExceeded("documentSize", maximum: 2048, actual: 2049))

            // Depth: ten fields deep is served (nothing is stored, so the pages are empty), twelve is not.
            let ten =
                "{ listRooms(limit: 1) { items { messages(limit: 1) { items { room { messages(limit: 1) { items { room { messages(limit: 1) { nextToken } } } } } } } } } }"
            #expect(try await send(ten)["data"]?["listRooms"]?["items"] == [])
            let twelve = ten.replacingOccurrences(of: "{ nextToken }", with: "{ items { room { name } } }")
            #expect(Self.refusal(try await send(twelve)) == Self.limitExceeded("depth", maximum: 10, actual: 12))

            func aliased(_ count: Int) -> String { "{ " + (0..<count).map { "a\($0): __typename" }.joined(separator: " ") + " }" }
            #expect(try await send(aliased(30))["data"]?["a29"] == "Query")
            #expect(Self.refusal(try await send(aliased(31))) == Self.limitExceeded("aliases", maximum: 30, actual: 31))

            // Fragments that spread the one below twice: 3 × 2^levels - 1 selections once spread (95, then 191).
            func doubling(_ levels: Int) -> String {
                "{ ...F\(levels) }\nfragment F0 on Query { __typename }\n"
                    + (1...levels).map { "fragment F\($0) on Query { ...F\($0 - 1) ...F\($0 - 1) }" }.joined(separator: "\n")
            }
            #expect(try await send(doubling(5))["data"]?["__typename"] == "Query")
            let selections = Self.refusal(try await send(doubling(6)))
            #expect(selections?["limit"] == "selections" && selections?["maximum"] == 100)

            // Three mutations run, each in its own transaction; four are refused, and none of them runs.
            let three = try await send(Self.batch(3))
            #expect(three["errors"] == nil && three["data"]?["m2"]?["id"] != nil)
            #expect(Self.refusal(try await send(Self.batch(4))) == Self.limitExceeded("mutations", maximum: 3, actual: 4))

            // Page size, from a literal or a variable.
            #expect(
                Self.refusal(try await send("{ listNotes(limit: 1001) { items { id } } }"))
                    == Self.limitExceeded("pageSize", maximum: 1000, actual: 1001))
            let page = "query($n: Int) { listNotes(limit: $n) { items { id } } }"
            #expect(Self.refusal(try await send(page, ["n": 1001])) == Self.limitExceeded("pageSize", maximum: 1000, actual: 1001))
            let full = try await send(page, ["n": 1000])
            #expect(full["data"]?["listNotes"]?["items"]?.arrayValue?.count == 3, "the three notes, and not the four refused")

            // Cost: 1 + 2 × 20,302 = 40,605 is the maximum; 1 + 3 × 20,302 is over it, from a variable or a literal.
            let rooms = "query($n: Int) { \(Self.roomsWithMessages) }"
            #expect(try await send(rooms, ["n": 2])["data"]?["listRooms"]?["items"] == [])
            #expect(Self.refusal(try await send(rooms, ["n": 3])) == Self.limitExceeded("cost", maximum: 40_605, actual: 60_907))
            let literal = "{ \(Self.roomsWithMessages.replacingOccurrences(of: "$n", with: "3")) }"
            #expect(Self.refusal(try await send(literal)) == Self.limitExceeded("cost", maximum: 40_605, actual: 60_907))
            let message = try #require(try await send(literal)["errors"]?.arrayValue?.first?["message"]?.stringValue)
            #expect(message.contains("60907") && message.contains("40605"))
        }
    }

    @Test func theDefaultLimitsAreInForce() async throws {
        try await withTestServer { server in
            let created = try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app)
            #expect(created.status == .created)
            let published = try await DataSchemaPublishingTests.publish(server, Self.schema)
            #expect(published.status == .ok)
            // Default pages nest: 1 + 100 × 20,302.
            let rooms = "{ \(Self.roomsWithMessages.replacingOccurrences(of: "(limit: $n)", with: "")) }"
            let costly = try await Self.graphQL(server, rooms).body
            #expect(Self.refusal(costly) == Self.limitExceeded("cost", maximum: 50_000, actual: 2_030_201))
            let tooMany = try await Self.graphQL(server, Self.batch(26)).body
            #expect(Self.refusal(tooMany) == Self.limitExceeded("mutations", maximum: 25, actual: 26))
            let enough = try await Self.graphQL(server, Self.batch(25)).body
            #expect(Self.refusal(enough) == nil, "25 mutations run (each refused by the rules here, but run)")
            let large = "{ __typename }" + String(repeating: " ", count: 64 * 1024)
            let huge = try await Self.graphQL(server, large).body
            #expect(Self.refusal(huge)?["limit"] == "documentSize")
        }
    }
}
