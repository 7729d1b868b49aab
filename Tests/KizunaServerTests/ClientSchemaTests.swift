import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import Testing

@testable import KizunaServer

/// The GraphQL API generated from a data schema: Amplify's names and shapes, and SDL that outside tooling reads.
@Suite("Client schema")
struct ClientSchemaTests {
    @Test func everyModelGetsAmplifysQueriesAndMutations() throws {
        let sdl = try ClientSchema(try DataSchema(sdl: DataSchemaPublishingTests.chat)).sdl
        for expected in [
            "getMessage(id: ID!): Message", "listMessages(", "listMessagesByRoom(", "roomId: ID!", "createdAt: ModelDateTimeKeyConditionInput",
            "syncMessages(", "since: String", "createMessage(input: CreateMessageInput!, condition: ModelMessageConditionInput): Message",
            "updateRoom(input: UpdateRoomInput!", "deleteRoom(input: DeleteRoomInput!", "type ModelMessageConnection",
            "messages(", "filter: ModelMessageFilterInput", "room: Room", "members: [String!]", "scalar DateTime",
            "input ModelStringListInput", "_version: Int!", "nextToken: String",
        ] {
            #expect(sdl.contains(expected), "\(expected) missing from:\n\(sdl)")
        }
        // The owner field is the server's to fill: not in the create input.
        let owned = try ClientSchema(try DataSchema(sdl: "type Note @model @auth(rules: [{allow: owner}]) { text: String }")).sdl
        let createInput = try #require(owned.components(separatedBy: "input CreateNoteInput {").last?.components(separatedBy: "}").first)
        #expect(createInput.contains("text") && !createInput.contains("owner"))
    }

    @Test(arguments: ["Category", "Box", "Boy", "Message", "Batch"])
    func pluralsFollowEnglish(_ model: String) {
        let expected = ["Category": "Categories", "Box": "Boxes", "Boy": "Boys", "Message": "Messages", "Batch": "Batches"]
        #expect(ClientNames.plural(model) == expected[model])
    }

    /// graphql-core (the reference implementation's Python port) reads the served SDL and finds the API in it.
    @Test func graphqlCoreReadsTheServedSDL() async throws {
        try await withTestServer { server in
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            #expect(try await DataSchemaPublishingTests.publish(server, DataSchemaPublishingTests.chat).status == .ok)
            let response = try await server.send(.get, "/v1/admin/apps/shop/schema.graphql")
            #expect(response.status == .ok && response.headers[.contentType]?.hasPrefix("text/plain") == true)
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("kizuna-sdl-\(UUID().uuidString).graphql")
            try Data(response.text.utf8).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Contract/graphql_check.py")
            let run = try await Python.run([
                script.path, "sdl", file.path, "Query.getMessage", "Query.listMessagesByRoom", "Query.syncRooms", "Mutation.createMessage",
                "Mutation.deleteRoom", "Room.messages", "Message.room",
            ])
            if run.status == 77 {
                try #require(!ContractTests.isCI, "CI=true: graphql-core must be installed (pip install graphql-core)")
                try Test.cancel("graphql-core is not installed (pip install graphql-core); .ci/run installs it")
            }
            #expect(run.status == 0, "graphql-core refused the SDL:\n\(run.output)")
        }
    }
}
