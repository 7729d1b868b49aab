import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import Testing

@testable import KizunaServer

/// gql, the Python GraphQL client, subscribes over the data API's WebSocket as an app team's client would
/// (`Tests/Contract/gql_ws_client.py`, with gql's `WebsocketsTransport` on `graphql-transport-ws`): a schema by
/// introspection over the socket, a subscriber hearing its own creates and no one else's with increasing
/// `extensions.seq`, `since` replaying what it missed while away before it goes live, queries and mutations over the
/// socket, and a forged token refused with 4403. `.ci/run` installs gql with its websockets transport; elsewhere the
/// test is skipped, with the reason, when it is missing — under `CI=true` it fails instead.
@Suite("Data API subscriptions through gql (an outside client)")
struct GQLWebSocketClientTests {
    /// What the script reads (its CONFIG_JSON): the server, the app, the model to subscribe to, and two accounts.
    struct Setup: Encodable {
        struct User: Encodable {
            var id: String
            var token: String
        }

        var server: String
        var app: String
        /// A model only its owner reads, with a `text: String!` field: `Note` of ``DataMutationTests/schema``.
        var model: String
        /// `a` subscribes; `b` creates records `a` must not hear of.
        var users: [String: User]
    }

    @Test(arguments: TestBackend.available)
    func gqlSubscribesOverTheWebSocketAsAnAppTeamWould(_ backend: TestBackend) async throws {
        try await withTestServer(backend) { server in
            let port = try #require(server.client.port)
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            let published = try await DataSchemaPublishingTests.publish(server, DataMutationTests.schema)
            try #require(published.status == .ok, "the notes schema did not publish: \(published.text)")
            var users: [String: Setup.User] = [:]
            for (name, identifier) in [("a", "alice@example.com"), ("b", "bob@example.com")] {
                let account = try await GraphQLEndpointTests.signUp(server, identifier)
                users[name] = Setup.User(id: account.id, token: account.token)
            }
            let setup = Setup(server: "http://127.0.0.1:\(port)", app: "shop", model: "Note", users: users)

            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kizuna-gql-ws-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("setup.json")
            try JSONEncoder().encode(setup).write(to: file)

            let script = GQLClientTests.contract.appendingPathComponent("gql_ws_client.py")
            let run = try await Python.run([script.path, file.path])
            if run.status == 77 {
                let install = "pip install 'gql[requests,websockets]>=4'"
                try #require(!ContractTests.isCI, "CI=true: gql must be installed with its websockets transport (\(install)): \(run.output)")
                try Test.cancel("gql's websockets transport is not installed (\(install)); .ci/run installs it")
            }
            #expect(run.status == 0, "gql_ws_client.py exited \(run.status):\n\(run.output)")
        }
    }
}
