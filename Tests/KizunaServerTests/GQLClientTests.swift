import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import Testing

@testable import KizunaServer

/// gql, the Python GraphQL client, drives the data API as an app team's tooling would (`Tests/Contract/gql_client.py`
/// on the chat example's schema and `Tests/Contract/gql_chat.graphql`): a schema by introspection that validates every
/// document, client ids with safe retries, versions and conflicts, conditions, index pages, reads through a room's
/// members, tombstones through sync, signed cursors and API keys. `.ci/run` installs gql; elsewhere the test is skipped,
/// with the reason, when it is missing — under `CI=true` it fails instead.
@Suite("Data API through gql (an outside client)")
struct GQLClientTests {
    /// The script and the schema it drives.
    static let contract = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Contract")

    /// What the script reads (its CONFIG_JSON): the endpoint, an API key of the app, and three accounts.
    struct Setup: Encodable {
        struct User: Encodable {
            var id: String
            var token: String
        }

        var url: String
        var apiKey: String
        /// `a` and `b` share a room in the script; `c` is in none.
        var users: [String: User]
    }

    @Test(arguments: TestBackend.available)
    func gqlUsesTheDataAPIAsAnAppTeamWould(_ backend: TestBackend) async throws {
        try await withTestServer(backend) { server in
            let port = try #require(server.client.port)
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            let chat = Self.contract.appendingPathComponent("../../Examples/Chat/schema.graphql")
            let sdl = try [chat, Self.contract.appendingPathComponent("gql_chat.graphql")]
                .map { try String(contentsOf: $0, encoding: .utf8) }.joined(separator: "\n")
            let published = try await DataSchemaPublishingTests.publish(server, sdl)
            try #require(published.status == .ok, "the chat schema did not publish: \(published.text)")
            var users: [String: Setup.User] = [:]
            for (name, identifier) in [("a", "alice@example.com"), ("b", "bob@example.com"), ("c", "carol@example.com")] {
                let account = try await GraphQLEndpointTests.signUp(server, identifier)
                users[name] = Setup.User(id: account.id, token: account.token)
            }
            let key = try await server.send(.post, "/v1/admin/apps/shop/api-keys", json: #"{"expiresInDays":1}"#).decode(CreatedAPIKey.self)
            let setup = Setup(url: "http://127.0.0.1:\(port)/v1/apps/shop/graphql", apiKey: key.key, users: users)

            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kizuna-gql-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("setup.json")
            try JSONEncoder().encode(setup).write(to: file)

            let run = try await Python.run([Self.contract.appendingPathComponent("gql_client.py").path, file.path])
            if run.status == 77 {
                try #require(!ContractTests.isCI, "CI=true: gql must be installed (pip install 'gql[requests]'): \(run.output)")
                try Test.cancel("gql is not installed (pip install 'gql[requests]'); .ci/run installs it")
            }
            #expect(run.status == 0, "gql_client.py exited \(run.status):\n\(run.output)")
        }
    }
}
