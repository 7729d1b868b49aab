import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import SQLKit
import Testing

@testable import KizunaServer

/// `POST /v1/apps/{app}/graphql`: reads through the rule engine, keyset pages with signed tokens, GraphQL errors
/// with stable codes, limits, and introspection an outside client can build a schema from.
@Suite("GraphQL endpoint")
struct GraphQLEndpointTests {
    static let schema = """
        type Note @model @auth(rules: [{ allow: owner }]) {
          text: String!
          rank: Int
        }

        type Notice @model @auth(rules: [{ allow: public, operations: [read] }]) {
          title: String!
        }

        type Room @model @auth(rules: [{ allow: private }]) {
          name: String
          messages: [Message] @hasMany(references: ["roomId"])
        }

        type Message @model @auth(rules: [{ allow: private }]) {
          roomId: ID!
          room: Room @belongsTo(references: ["roomId"])
        }
        """

    /// Sends a GraphQL request with optional bearer token and API key; answers the decoded body and the status.
    static func graphQL(
        _ server: TestServer, _ query: String, variables: JSONValue? = nil, token: String? = nil, apiKey: String? = nil
    ) async throws -> (status: HTTPResponse.Status, body: JSONValue) {
        var headers: HTTPFields = [:]
        if let token { headers[.authorization] = "Bearer \(token)" }
        if let apiKey { headers[.apiKey] = apiKey }
        var request: [String: JSONValue] = ["query": .string(query)]
        if let variables { request["variables"] = variables }
        let json = String(decoding: try JSONEncoder().encode(JSONValue.object(request)), as: UTF8.self)
        let response = try await server.send(.post, "/v1/apps/shop/graphql", json: json, headers: headers, authorized: false)
        return (response.status, try response.decode(JSONValue.self))
    }

    static func signUp(_ server: TestServer, _ identifier: String) async throws -> (id: String, token: String) {
        let grant = try await server.send(
            .post, "/v1/auth/sign-up", json: #"{"identifier":"\#(identifier)","password":"correct horse battery"}"#, authorized: false
        ).decode(SessionGrant.self)
        return (grant.account.id, grant.session.accessToken)
    }

    static func insertNote(_ server: TestServer, id: String, owner: String, text: String, rank: Int, at millis: Int64) async throws {
        let table = DataTables.table(app: "shop", model: "Note")
        try await server.database.raw(
            """
            INSERT INTO \(ident: table) ("id", "text", "rank", "owner", "createdAt", "updatedAt", "_version", "_seq")
            VALUES (\(bind: id), \(bind: text), \(bind: rank), \(bind: owner), \(bind: millis), \(bind: millis), 1, 1)
            """
        ).run()
    }

    static func code(_ body: JSONValue) -> String? {
        body["errors"]?.arrayValue?.first?["extensions"]?["code"]?.stringValue
    }

    @Test(arguments: TestBackend.available)
    func ownersReadTheirOwnRecordsPageByPage(_ backend: TestBackend) async throws {
        try await withTestServer(backend) { server in
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            #expect(try await DataSchemaPublishingTests.publish(server, Self.schema).status == .ok)
            let alice = try await Self.signUp(server, "alice@example.com")
            let bob = try await Self.signUp(server, "bob@example.com")
            for (index, rank) in [3, 1, 2].enumerated() {
                try await Self.insertNote(server, id: "a\(index)", owner: alice.id, text: "alice \(index)", rank: rank, at: 1000 + Int64(index))
            }
            try await Self.insertNote(server, id: "b0", owner: bob.id, text: "bob", rank: 9, at: 999)

            let all = try await Self.graphQL(server, "{ listNotes { items { id text rank owner createdAt } nextToken } }", token: alice.token)
            #expect(all.status == .ok)
            #expect(all.body["data"]?["listNotes"]?["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["a0", "a1", "a2"])
            #expect(all.body["data"]?["listNotes"]?["items"]?.arrayValue?.first?["createdAt"] == "1970-01-01T00:00:01.000Z")
            let foreign = try await Self.graphQL(server, #"{ getNote(id: "b0") { id } }"#, token: alice.token)
            #expect(foreign.body["data"]?["getNote"] == .null, "another user's record is never returned")
            let own = try await Self.graphQL(server, #"{ getNote(id: "b0") { text } }"#, token: bob.token)
            #expect(own.body["data"]?["getNote"]?["text"] == "bob")

            // Two pages of two, then none; the filter counts rows returned, not scanned.
            let page = "query($token: String) { listNotes(limit: 2, nextToken: $token) { items { id } nextToken } }"
            let first = try await Self.graphQL(server, page, token: alice.token)
            let token = try #require(first.body["data"]?["listNotes"]?["nextToken"]?.stringValue)
            let second = try await Self.graphQL(server, page, variables: ["token": .string(token)], token: alice.token)
            #expect(second.body["data"]?["listNotes"]?["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["a2"])
            #expect(second.body["data"]?["listNotes"]?["nextToken"] == .null)
            let tampered = try await Self.graphQL(server, page, variables: ["token": .string(token + "x")], token: alice.token)
            #expect(Self.code(tampered.body) == "bad_cursor")
            let ranked = try await Self.graphQL(server, "{ listNotes(filter: { rank: { gt: 1 } }) { items { id } } }", token: alice.token)
            #expect(ranked.body["data"]?["listNotes"]?["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["a0", "a2"])
            #expect(ranked.body["extensions"]?["unindexedFilter"]?["Note"] == ["rank"])

            // Nobody signed in: no rule lets them read notes.
            #expect(Self.code(try await Self.graphQL(server, "{ listNotes { items { id } } }").body) == "unauthorized")
            let expired = try await Self.graphQL(server, "{ listNotes { items { id } } }", token: "kzs_not-a-session")
            #expect(expired.status == .unauthorized && Self.code(expired.body) == "session_expired")
        }
    }

    @Test(arguments: TestBackend.available)
    func publicRulesWantTheAppsAPIKey(_ backend: TestBackend) async throws {
        try await withTestServer(backend) { server in
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            #expect(try await DataSchemaPublishingTests.publish(server, Self.schema).status == .ok)
            let table = DataTables.table(app: "shop", model: "Notice")
            try await server.database.raw(
                """
                INSERT INTO \(ident: table) ("id", "title", "createdAt", "updatedAt", "_version", "_seq") VALUES ('n1', 'Welcome', 1, 1, 1, 1)
                """
            ).run()
            let key = try await server.send(.post, "/v1/admin/apps/shop/api-keys", json: #"{"expiresInDays":1}"#).decode(CreatedAPIKey.self)

            let query = "{ listNotices { items { title } } }"
            let open = try await Self.graphQL(server, query, apiKey: key.key)
            #expect(open.body["data"]?["listNotices"]?["items"] == [["title": "Welcome"]])
            #expect(Self.code(try await Self.graphQL(server, query).body) == "unauthorized")
            _ = try await server.send(.delete, "/v1/admin/apps/shop/api-keys/\(key.info.id)")
            let revoked = try await Self.graphQL(server, query, apiKey: key.key)
            #expect(revoked.status == .unauthorized && Self.code(revoked.body) == "api_key_revoked")
        }
    }

    @Test func limitsAndIntrospection() async throws {
        try await withTestServer { server in
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            #expect(try await DataSchemaPublishingTests.publish(server, Self.schema).status == .ok)
            // Records nested through relations: 12 deep. (Introspection, which codegen tools run 11 deep, is exempt.)
            let deep =
                "{ listRooms { items { messages { items { room { messages { items { room { messages { items { room { name } } } } } } } } } } } }"
            #expect(Self.refusal(try await Self.graphQL(server, deep).body)?["limit"] == "depth")
            // Depth counts through fragments as they run: each fragment is shallow, their chain is not.
            let chained = """
                { listRooms { items { ...A } } }
                fragment A on Room { messages { items { ...B } } }
                fragment B on Message { room { messages { items { ...C } } } }
                fragment C on Message { room { messages { items { room { name } } } } }
                """
            #expect(Self.refusal(try await Self.graphQL(server, chained).body)?["limit"] == "depth")
            let shallow = "{ __schema { ...Q } } fragment Q on __Schema { queryType { name } }"
            #expect(try await Self.graphQL(server, shallow).body["data"]?["__schema"]?["queryType"]?["name"] == "Query")
            let cycle = "{ __schema { ...Loop } } fragment Loop on __Schema { queryType { name } ...Loop }"
            #expect(Self.code(try await Self.graphQL(server, cycle).body) == "validation_failed")
            let aliases = "{ " + (0..<31).map { "a\($0): __typename" }.joined(separator: " ") + " }"
            #expect(Self.refusal(try await Self.graphQL(server, aliases).body)?["limit"] == "aliases")
            #expect(Self.code(try await Self.graphQL(server, "{ nope }").body) == "validation_failed")
            #expect(Self.code(try await Self.graphQL(server, "{ listNotes {").body) == "validation_failed")

            // graphql-core builds a client schema from the live introspection, as an app team's codegen would.
            let port = try #require(server.client.port)
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Contract/graphql_check.py")
            let run = try await Python.run([
                script.path, "introspect", "http://127.0.0.1:\(port)/v1/apps/shop/graphql", "Query.listNotes", "Query.getNotice",
                "Mutation.createNote",
            ])
            if run.status == 77 {
                try #require(!ContractTests.isCI, "CI=true: graphql-core must be installed (pip install graphql-core)")
                try Test.cancel("graphql-core is not installed (pip install graphql-core); .ci/run installs it")
            }
            #expect(run.status == 0, "graphql-core could not build a schema from the introspection:\n\(run.output)")
        }
    }
}
