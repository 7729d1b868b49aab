import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import SQLKit
import Testing

@testable import KizunaServer

/// `createX`, `updateX` and `deleteX` through `POST /v1/apps/{app}/graphql`: owners from the session, safe retries,
/// typed conflicts with the current record, conditions, and a `changes` row per write.
@Suite("Data mutations")
struct DataMutationTests {
    static let schema = """
        type Note @model @auth(rules: [{ allow: owner }]) {
          text: String!
          rank: Int
          tags: [String]
          due: DateTime
          owner: String
        }

        type Room @model @auth(rules: [{ allow: owners, ownerField: "members" }]) {
          name: String
          members: [String]
          messages: [Message] @hasMany(references: ["roomId"])
        }

        type Message @model @auth(rules: [
          { allow: owners, ownerField: "members", via: "room", operations: [create, read] },
          { allow: owner, operations: [read, update, delete] }
        ]) {
          roomId: ID!
          room: Room @belongsTo(references: ["roomId"])
          text: String
        }
        """

    static let fields = "id text rank tags due owner createdAt updatedAt _version _deleted"

    static func graphQL(_ server: TestServer, _ query: String, _ variables: JSONValue? = nil, token: String? = nil) async throws -> JSONValue {
        try await GraphQLEndpointTests.graphQL(server, query, variables: variables, token: token).body
    }

    static func start(
        _ backend: TestBackend,
        _ body: @escaping @Sendable (TestServer, _ alice: (id: String, token: String), _ bob: (id: String, token: String)) async throws -> Void
    )
        async throws
    {
        try await withTestServer(backend) { server in
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            #expect(try await DataSchemaPublishingTests.publish(server, Self.schema).status == .ok)
            let alice = try await GraphQLEndpointTests.signUp(server, "alice@example.com")
            let bob = try await GraphQLEndpointTests.signUp(server, "bob@example.com")
            try await body(server, alice, bob)
        }
    }

    /// The first error of an answer.
    static func error(_ body: JSONValue) -> JSONValue? {
        body["errors"]?.arrayValue?.first
    }

    /// The `data` changes in the log, oldest first.
    static func changes(_ server: TestServer) async throws -> [ChangeRecord] {
        try await ChangeLog.read(after: 0, limit: 1000, kinds: [DataRuntime.changeKind], on: server.database)
    }

    @Test(arguments: TestBackend.available)
    func aRetriedCreateGetsTheSameRecordAndOtherContentIsAConflict(_ backend: TestBackend) async throws {
        try await Self.start(backend) { server, alice, bob in
            let create = "mutation($input: CreateNoteInput!) { createNote(input: $input) { \(Self.fields) } }"
            let input: JSONValue = [
                "id": "n1", "text": "hello", "rank": 2, "tags": ["a", "b"], "due": "2026-11-23T09:00:00+09:00", "owner": "mallory",
            ]
            let first = try await Self.graphQL(server, create, ["input": input], token: alice.token)
            let note = try #require(first["data"]?["createNote"], "\(first)")
            #expect(note["owner"] == .string(alice.id), "the owner is the session's; a forged one is ignored")
            #expect(note["_version"] == 1 && note["_deleted"] == false)
            #expect(note["tags"] == ["a", "b"] && note["due"] == "2026-11-23T00:00:00.000Z")

            // The same create again, as a retry after a lost answer: the same record, and still one row and one change.
            let again = try await Self.graphQL(server, create, ["input": input], token: alice.token)
            #expect(again["data"]?["createNote"] == note)
            let rows = try await server.database.raw("SELECT COUNT(*) AS n FROM \(ident: DataTables.table(app: "shop", model: "Note"))").first()
            #expect(try rows?.decode(column: "n", as: Int.self) == 1)
            let logged = try await Self.changes(server)
            #expect(logged.count == 1)
            #expect(logged.first?.entityId == "shop" && logged.first?.owner == alice.id && logged.first?.version == 1)
            let payload = try JSONDecoder().decode(JSONValue.self, from: Data((logged.first?.payload ?? "").utf8))
            #expect(payload["model"] == "Note" && payload["id"] == "n1" && payload["deleted"] == false)
            #expect(payload["facts"] == ["owner": .string(alice.id)])
            #expect(payload["record"]?["text"] == "hello" && payload["record"]?["tags"] == ["a", "b"] && payload["record"]?["_version"] == 1)

            // The same id with other content: a conflict carrying the stored record.
            let changed: JSONValue = [
                "id": "n1", "text": "changed", "rank": 2, "tags": ["a", "b"], "due": "2026-11-23T09:00:00+09:00", "owner": "mallory",
            ]
            let conflict = try await Self.graphQL(server, create, ["input": changed], token: alice.token)
            #expect(GraphQLEndpointTests.code(conflict) == "conflict")
            #expect(Self.error(conflict)?["extensions"]?["current"]?["text"] == "hello")
            #expect(Self.error(conflict)?["path"] == ["createNote"])
            // Another user sending the same input: a conflict too, without a record it may not read.
            let foreign = try await Self.graphQL(server, create, ["input": input], token: bob.token)
            #expect(GraphQLEndpointTests.code(foreign) == "conflict")
            #expect(Self.error(foreign)?["extensions"]?["current"] == nil)

            // Without an id the server makes one; without a credential nothing is created.
            let fresh = try await Self.graphQL(server, #"mutation { createNote(input: { text: "x" }) { id owner } }"#, token: bob.token)
            #expect(UUID(uuidString: fresh["data"]?["createNote"]?["id"]?.stringValue ?? "") != nil)
            let anonymous = try await Self.graphQL(server, #"mutation { createNote(input: { text: "x" }) { id } }"#)
            #expect(GraphQLEndpointTests.code(anonymous) == "unauthorized")
            let invalid = try await Self.graphQL(server, #"mutation { createNote(input: { text: "x", due: "tomorrow" }) { id } }"#, token: bob.token)
            #expect(GraphQLEndpointTests.code(invalid) == "validation_failed")
            #expect(try await Self.changes(server).count == 2, "refused creates write no change")
        }
    }

    @Test(arguments: TestBackend.available)
    func updatesAndDeletesCheckTheVersionAndTheCondition(_ backend: TestBackend) async throws {
        try await Self.start(backend) { server, alice, bob in
            _ = try await Self.graphQL(server, #"mutation { createNote(input: { id: "n1", text: "one", rank: 1 }) { id } }"#, token: alice.token)
            let update =
                "mutation($input: UpdateNoteInput!, $condition: ModelNoteConditionInput) { updateNote(input: $input, condition: $condition) { \(Self.fields) } }"

            let updated = try await Self.graphQL(
                server, update, ["input": ["id": "n1", "_version": 1, "text": "two", "rank": nil]], token: alice.token)
            #expect(updated["data"]?["updateNote"]?["_version"] == 2, "\(updated)")
            #expect(updated["data"]?["updateNote"]?["text"] == "two" && updated["data"]?["updateNote"]?["rank"] == .null)

            let stale = try await Self.graphQL(server, update, ["input": ["id": "n1", "_version": 1, "text": "late"]], token: alice.token)
            #expect(GraphQLEndpointTests.code(stale) == "conflict")
            #expect(Self.error(stale)?["extensions"]?["current"]?["_version"] == 2)
            #expect(Self.error(stale)?["extensions"]?["current"]?["text"] == "two")

            let unmet = try await Self.graphQL(
                server, update, ["input": ["id": "n1", "text": "three"], "condition": ["text": ["eq": "one"]]], token: alice.token)
            #expect(GraphQLEndpointTests.code(unmet) == "condition_failed")
            let met = try await Self.graphQL(
                server, update, ["input": ["id": "n1", "text": "three"], "condition": ["text": ["eq": "two"]]], token: alice.token)
            #expect(met["data"]?["updateNote"]?["_version"] == 3)

            // Bob can neither see nor change Alice's note: not found, which says nothing about whether it exists.
            let foreign = try await Self.graphQL(server, update, ["input": ["id": "n1", "text": "bob"]], token: bob.token)
            #expect(GraphQLEndpointTests.code(foreign) == "not_found")
            let required = try await Self.graphQL(server, update, ["input": ["id": "n1", "text": nil]], token: alice.token)
            #expect(GraphQLEndpointTests.code(required) == "validation_failed")

            let delete = "mutation($input: DeleteNoteInput!) { deleteNote(input: $input) { id _deleted _version text } }"
            let staleDelete = try await Self.graphQL(server, delete, ["input": ["id": "n1", "_version": 2]], token: alice.token)
            #expect(GraphQLEndpointTests.code(staleDelete) == "conflict")
            let deleted = try await Self.graphQL(server, delete, ["input": ["id": "n1", "_version": 3]], token: alice.token)
            #expect(deleted["data"]?["deleteNote"]?["_deleted"] == true && deleted["data"]?["deleteNote"]?["_version"] == 4)
            #expect(try await Self.graphQL(server, #"{ getNote(id: "n1") { id } }"#, token: alice.token)["data"]?["getNote"] == .null)
            let gone = try await Self.graphQL(server, update, ["input": ["id": "n1", "text": "again"]], token: alice.token)
            #expect(GraphQLEndpointTests.code(gone) == "not_found")
            let reused = try await Self.graphQL(server, #"mutation { createNote(input: { id: "n1", text: "three" }) { id } }"#, token: alice.token)
            #expect(GraphQLEndpointTests.code(reused) == "conflict", "a deleted record's id is not used again")

            // One change per write that happened, in order, each with the version it made.
            let logged = try await Self.changes(server)
            #expect(logged.map(\.version) == [1, 2, 3, 4])
            // Each change carries the record as that change left it: the delete's is the tombstone at version 4.
            let last = try JSONDecoder().decode(JSONValue.self, from: Data((logged.last?.payload ?? "").utf8))
            #expect(last["record"]?["_deleted"] == true && last["record"]?["_version"] == 4 && last["record"]?["text"] == "three")
        }
    }

    @Test(arguments: TestBackend.available)
    func aMessageIsCreatedThroughItsRoomsMembers(_ backend: TestBackend) async throws {
        try await Self.start(backend) { server, alice, bob in
            let carol = try await GraphQLEndpointTests.signUp(server, "carol@example.com")
            let room = try await Self.graphQL(
                server, "mutation($m: [String!]) { createRoom(input: { id: \"r1\", name: \"lobby\", members: $m }) { id members } }",
                ["m": [.string(alice.id), .string(bob.id)]], token: alice.token)
            #expect(room["data"]?["createRoom"]?["members"] == [.string(alice.id), .string(bob.id)], "\(room)")
            // A room whose members leave out its creator would be one nobody could reach: refused.
            let orphan = try await Self.graphQL(server, #"mutation { createRoom(input: { name: "x", members: [] }) { id } }"#, token: alice.token)
            #expect(GraphQLEndpointTests.code(orphan) == "forbidden")

            let post = "mutation($text: String) { createMessage(input: { roomId: \"r1\", text: $text }) { id owner roomId } }"
            let byBob = try await Self.graphQL(server, post, ["text": "hi"], token: bob.token)
            #expect(byBob["data"]?["createMessage"]?["owner"] == .string(bob.id), "\(byBob)")
            let byCarol = try await Self.graphQL(server, post, ["text": "let me in"], token: carol.token)
            #expect(GraphQLEndpointTests.code(byCarol) == "forbidden")
            let nowhere = try await Self.graphQL(
                server, #"mutation { createMessage(input: { roomId: "nope", text: "x" }) { id } }"#, token: bob.token)
            #expect(GraphQLEndpointTests.code(nowhere) == "forbidden")

            // The message's facts name its room, which is what a delivery decides on.
            let payload = try #require(try await Self.changes(server).last?.payload)
            let facts = try JSONDecoder().decode(JSONValue.self, from: Data(payload.utf8))["facts"]
            #expect(facts == ["roomId": "r1", "owner": .string(bob.id)])
            let recorded = try JSONDecoder().decode(JSONValue.self, from: Data(payload.utf8))["record"]
            #expect(recorded?["text"] == "hi" && recorded?["_deleted"] == false)

            // Alice reads Bob's message through the room; only its author changes it.
            let id = try #require(byBob["data"]?["createMessage"]?["id"]?.stringValue)
            let read = try await Self.graphQL(server, "{ getMessage(id: \"\(id)\") { text } }", token: alice.token)
            #expect(read["data"]?["getMessage"]?["text"] == "hi")
            let edit = try await Self.graphQL(
                server, "mutation { updateMessage(input: { id: \"\(id)\", text: \"edited\" }) { text } }", token: alice.token)
            #expect(GraphQLEndpointTests.code(edit) == "forbidden", "Alice may read it, so she learns she may not change it")
        }
    }

    @Test(arguments: TestBackend.available)
    func deletingAnAppDropsItsRecords(_ backend: TestBackend) async throws {
        try await Self.start(backend) { server, alice, _ in
            _ = try await Self.graphQL(server, #"mutation { createNote(input: { id: "n1", text: "kept?" }) { id } }"#, token: alice.token)
            let deleted = try await server.send(.delete, "/v1/admin/apps/shop")
            #expect(deleted.status == .noContent)
            // The same id registered again starts empty: its schema publishes, and no record of the old app is there.
            let created = try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app)
            #expect(created.status == .created)
            let published = try await DataSchemaPublishingTests.publish(server, Self.schema)
            #expect(published.status == .ok, "\(published.text)")
            let notes = try await Self.graphQL(server, "{ listNotes { items { id } } }", token: alice.token)
            #expect(notes["data"]?["listNotes"]?["items"] == [])
        }
    }
}
