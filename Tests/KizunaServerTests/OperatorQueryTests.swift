import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import SQLKit
import Testing

@testable import KizunaServer

/// `POST /v1/admin/apps/{app}/graphql`: the app's data API run by an operator, past every rule or as one account.
@Suite("GraphQL for operators")
struct OperatorQueryTests {
    static let schema = """
        type Note @model @auth(rules: [{ allow: owner }]) {
          text: String!
          rank: Int
        }

        type Report @model @auth(rules: [{ allow: groups, groups: ["moderators"], operations: [read] }]) {
          title: String!
        }

        type Secret @model {
          text: String
        }
        """

    /// Sends a document to the admin route; answers the status and the decoded body (GraphQL's, or an error envelope).
    static func query(
        _ server: TestServer, _ query: String, variables: [String: JSONValue]? = nil, operationName: String? = nil, asUser: String? = nil,
        app: String = "shop", headers: HTTPFields = [:], authorized: Bool = true
    ) async throws -> (status: HTTPResponse.Status, body: JSONValue) {
        let request = DataQueryRequest(query: query, variables: variables, operationName: operationName, asUser: asUser)
        let json = String(decoding: try JSONEncoder().encode(request), as: UTF8.self)
        let response = try await server.send(.post, "/v1/admin/apps/\(app)/graphql", json: json, headers: headers, authorized: authorized)
        return (response.status, try response.decode(JSONValue.self))
    }

    static func ids(_ body: JSONValue, _ field: String) -> [String]? {
        body["data"]?[field]?["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue }
    }

    static func insert(_ server: TestServer, model: String, id: String, column: String, value: String) async throws {
        let table = DataTables.table(app: "shop", model: model)
        try await server.database.raw(
            """
            INSERT INTO \(ident: table) ("id", \(ident: column), "createdAt", "updatedAt", "_version", "_seq")
            VALUES (\(bind: id), \(bind: value), 1, 1, 1, 1)
            """
        ).run()
    }

    @Test(arguments: TestBackend.available)
    func theOperatorPassesEveryRuleAndAUserOnlyTheirs(_ backend: TestBackend) async throws {
        try await withTestServer(backend) { server in
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            #expect(try await DataSchemaPublishingTests.publish(server, Self.schema).status == .ok)
            let alice = try await GraphQLEndpointTests.signUp(server, "alice@example.com")
            let bob = try await GraphQLEndpointTests.signUp(server, "bob@example.com")
            try await GraphQLEndpointTests.insertNote(server, id: "a0", owner: alice.id, text: "alice", rank: 1, at: 1000)
            try await GraphQLEndpointTests.insertNote(server, id: "b0", owner: bob.id, text: "bob", rank: 2, at: 1001)
            try await Self.insert(server, model: "Secret", id: "s1", column: "text", value: "hush")
            try await Self.insert(server, model: "Report", id: "r1", column: "title", value: "spam")

            // The operator sees every user's records, and a model without rules that no app caller can read.
            let notes = try await Self.query(server, "{ listNotes { items { id owner } } }")
            #expect(notes.status == .ok && Self.ids(notes.body, "listNotes") == ["a0", "b0"])
            #expect(notes.body["errors"] == nil)
            #expect(Self.ids(try await Self.query(server, "{ listSecrets { items { id } } }").body, "listSecrets") == ["s1"])
            #expect(try await Self.query(server, #"{ getNote(id: "b0") { text } }"#).body["data"]?["getNote"]?["text"] == "bob")
            let secrets = "{ listSecrets { items { id } } }"
            #expect(GraphQLEndpointTests.code(try await GraphQLEndpointTests.graphQL(server, secrets).body) == "unauthorized")
            #expect(GraphQLEndpointTests.code(try await GraphQLEndpointTests.graphQL(server, secrets, token: alice.token).body) == "forbidden")

            // As a user (by identifier or id): that user's rules, groups included.
            let asAlice = try await Self.query(server, "{ listNotes { items { id } } }", asUser: "alice@example.com")
            #expect(asAlice.status == .ok && Self.ids(asAlice.body, "listNotes") == ["a0"])
            #expect(GraphQLEndpointTests.code(try await Self.query(server, secrets, asUser: alice.id).body) == "forbidden")
            let reports = "{ listReports { items { id } } }"
            #expect(GraphQLEndpointTests.code(try await Self.query(server, reports, asUser: bob.id).body) == "forbidden")
            #expect(try await server.send(.put, "/v1/admin/users/\(bob.id)/groups/moderators").status == .ok)
            #expect(Self.ids(try await Self.query(server, reports, asUser: bob.id).body, "listReports") == ["r1"])

            // The same request shape and answer as the app's endpoint: variables, operationName, extensions, limits.
            let document = """
                query Mine($limit: Int) { listNotes(limit: $limit) { items { id } nextToken } }
                query Other { listSecrets { items { id } } }
                """
            let paged = try await Self.query(server, document, variables: ["limit": 1], operationName: "Mine")
            #expect(Self.ids(paged.body, "listNotes") == ["a0"] && paged.body["data"]?["listNotes"]?["nextToken"]?.stringValue != nil)
            let filtered = try await Self.query(server, "{ listNotes(filter: { rank: { gt: 1 } }) { items { id } } }")
            #expect(Self.ids(filtered.body, "listNotes") == ["b0"] && filtered.body["extensions"]?["unindexedFilter"]?["Note"] == ["rank"])
            let aliases = "{ " + (0..<31).map { "a\($0): __typename" }.joined(separator: " ") + " }"
            #expect(GraphQLEndpointTests.code(try await Self.query(server, aliases).body) == "limit_exceeded")
            #expect(GraphQLEndpointTests.code(try await Self.query(server, "{ nope }").body) == "validation_failed")
        }
    }

    @Test func refusesWithoutAnAdminTokenAndNamesAnUnknownUser() async throws {
        try await withTestServer() { server in
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            #expect(try await DataSchemaPublishingTests.publish(server, Self.schema).status == .ok)
            let alice = try await GraphQLEndpointTests.signUp(server, "alice@example.com")
            let query = "{ listNotes { items { id } } }"

            let anonymous = try await Self.query(server, query, authorized: false)
            #expect(anonymous.status == .unauthorized && anonymous.body["error"]?["code"] == "unauthorized")
            // A user's session is no admin token.
            let session = try await Self.query(server, query, headers: [.authorization: "Bearer \(alice.token)"])
            #expect(session.status == .unauthorized)

            for reference in ["nobody@example.com", "usr_nobody", ""] {
                let unknown = try await Self.query(server, query, asUser: reference)
                #expect(unknown.status == .notFound && unknown.body["error"]?["code"] == "not_found", "\(reference)")
                #expect(unknown.body["error"]?["field"] == "asUser")
            }
            let named = try await Self.query(server, query, asUser: "nobody@example.com")
            #expect(named.body["error"]?["message"]?.stringValue?.contains("nobody@example.com") == true)

            let missingApp = try await Self.query(server, query, app: "nope")
            #expect(missingApp.status == .notFound && missingApp.body["error"]?["code"] == "not_found")
            let noQuery = try await server.send(.post, "/v1/admin/apps/shop/graphql", json: #"{"variables":{}}"#)
            #expect(noQuery.status == .badRequest)
        }
    }
}
