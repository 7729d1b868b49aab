import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import SQLKit
import Testing

@testable import KizunaServer

/// Publishing a data schema through the admin API changes the store to follow it, in the publish's transaction:
/// tables, columns and indexes on both engines; destructive changes refused until allowed.
@Suite("Data schema publishing")
struct DataSchemaPublishingTests {
    static let chat = """
        type Room @model @auth(rules: [{ allow: owners, ownerField: "members" }]) {
          name: String!
          members: [String]
          messages: [Message] @hasMany(references: ["roomId"])
        }

        type Message @model @auth(rules: [{ allow: owners, ownerField: "members", via: "room" }]) {
          roomId: ID! @index(name: "byRoom", sortKeyFields: ["createdAt"])
          room: Room @belongsTo(references: ["roomId"])
          text: String!
        }
        """

    static let chatWithEdits = chat.replacingOccurrences(
        of: "  text: String!\n", with: "  text: String!\n  editedAt: DateTime\n  pinned: Boolean @default(value: \"false\")\n")

    static let chatWithoutText = chatWithEdits.replacingOccurrences(of: "  text: String!\n", with: "")

    /// `POST …/schema:publish` with `sdl` over whatever is live.
    static func publish(_ server: TestServer, _ sdl: String, query: String = "") async throws -> TestResponse {
        let body = try JSONEncoder().encode(PublishRequest(document: SchemaDocument.document(sdl: sdl), message: "test"))
        return try await server.send(
            .post, "/v1/admin/apps/shop/schema:publish\(query)", json: String(decoding: body, as: UTF8.self), headers: [.ifMatch: "*"])
    }

    /// The columns of a table, by name.
    static func columns(_ database: KizunaDatabase, _ table: String) async throws -> Set<String> {
        if database.engine == .postgres {
            let rows = try await database.raw(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = \(bind: table)"
            ).all()
            return Set(try rows.map { try $0.decode(column: "column_name", as: String.self) })
        }
        let rows = try await database.raw("SELECT name FROM pragma_table_info(\(bind: table))").all()
        return Set(try rows.map { try $0.decode(column: "name", as: String.self) })
    }

    /// How many indexes a table has, besides its primary key.
    static func indexCount(_ database: KizunaDatabase, _ table: String) async throws -> Int {
        if database.engine == .postgres {
            return try await database.raw(
                "SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = \(bind: table) AND indexname LIKE 'ix_%'"
            ).all().count
        }
        return try await database.raw("SELECT name FROM pragma_index_list(\(bind: table)) WHERE name LIKE 'ix_%'").all().count
    }

    @Test(arguments: TestBackend.available)
    func theStoreFollowsEachPublish(_ backend: TestBackend) async throws {
        try await withTestServer(backend) { server in
            let app = #"{"id":"shop","name":"Shop","platform":"ios","bundleId":"com.example.shop","teamId":"ABCDE12345"}"#
            #expect(try await server.send(.post, "/v1/admin/apps", json: app).status == .created)
            let messages = DataTables.table(app: "shop", model: "Message")

            // v1: two models become tables with their automatic columns and indexes.
            let first = try await Self.publish(server, Self.chat)
            #expect(first.status == .ok, "\(first.text)")
            #expect(
                try await Self.columns(server.database, messages) == [
                    "id", "roomId", "text", "createdAt", "updatedAt", "_version", "_deleted", "_seq",
                ])
            #expect(try await Self.indexCount(server.database, messages) == 3)  // createdAt, seq, byRoom
            #expect(try await Self.columns(server.database, DataTables.table(app: "shop", model: "Room")).contains("members"))
            try await server.database.raw(
                """
                INSERT INTO \(ident: messages) ("id", "roomId", "text", "createdAt", "updatedAt", "_version", "_seq")
                VALUES ('m1', 'r1', 'hello', 1, 1, 1, 1)
                """
            ).run()

            // v2 planned, then published: additive, the row stays and reads the new default.
            let plan = try await Self.publish(server, Self.chatWithEdits, query: "?validateOnly=true")
            #expect(plan.status == .ok, "\(plan.text)")
            let changes = try #require(try plan.decode(DocumentValidation.self).changes)
            #expect(changes.map(\.action) == ["addField", "addField"] && changes.allSatisfy { !$0.destructive })
            #expect(try await Self.publish(server, Self.chatWithEdits).status == .ok)
            #expect(try await Self.columns(server.database, messages).isSuperset(of: ["editedAt", "pinned", "text"]))
            let row = try #require(try await server.database.raw("SELECT \(ident: "pinned"), \(ident: "text") FROM \(ident: messages)").first())
            #expect(try row.decode(column: "pinned", as: Bool.self) == false && row.decode(column: "text", as: String.self) == "hello")

            // v3 drops a field: refused with the change listed, and nothing changes; allowed, it applies.
            let refused = try await Self.publish(server, Self.chatWithoutText)
            #expect(refused.status == .conflict)
            #expect(refused.error?.code == .destructiveChange && refused.error?.details.map(\.field) == ["Message.text"])
            #expect(try await Self.columns(server.database, messages).contains("text"))
            #expect(try await server.send(.get, "/v1/admin/apps/shop/schema").decode(PublishedDocument.self).version == 2)
            let listed = try await Self.publish(server, Self.chatWithoutText, query: "?validateOnly=true&allowDestructive=true")
            #expect(try listed.decode(DocumentValidation.self).changes?.map(\.destructive) == [true])
            #expect(try await Self.publish(server, Self.chatWithoutText, query: "?allowDestructive=true").status == .ok)
            #expect(try await Self.columns(server.database, messages).contains("text") == false)

            // Rolling back to v1 would drop editedAt and pinned: refused the same way.
            let rollback = try await server.send(.post, "/v1/admin/apps/shop/schema:rollback", json: #"{"version":1}"#, headers: [.ifMatch: "*"])
            #expect(rollback.status == .conflict && rollback.error?.code == .destructiveChange)
        }
    }

    @Test(arguments: TestBackend.available)
    func badSDLIsRefusedWithLinesAndTheStoreUntouched(_ backend: TestBackend) async throws {
        try await withTestServer(backend) { server in
            let app = #"{"id":"shop","name":"Shop","platform":"ios","bundleId":"com.example.shop","teamId":"ABCDE12345"}"#
            #expect(try await server.send(.post, "/v1/admin/apps", json: app).status == .created)
            let response = try await Self.publish(server, "type Note @model {\n  text: Strin\n}\n")
            #expect(response.status == .badRequest)
            let detail = try #require(response.error?.details.first)
            #expect(detail.line == 2 && detail.column != nil)
            #expect(try await Self.columns(server.database, DataTables.table(app: "shop", model: "Note")).isEmpty)
            #expect(try await server.send(.get, "/v1/admin/apps/shop/schema").decode(PublishedDocument.self).version == 0)
        }
    }
}
