import ArgumentParser
import Foundation
import KizunaClient
import KizunaCore
import Testing

@testable import KizunaServer
@testable import kizuna

/// `kizuna data query`, run in-process against a real server on a loopback port.
@Suite("kizuna data query")
struct DataCommandTests {
    static let schema = """
        type Note @model @auth(rules: [{ allow: owner }]) {
          text: String
        }

        type Secret @model {
          text: String
        }
        """

    @Test func queriesAsTheOperatorOrAsAnAccount() async throws {
        try await CLIServer.run { server in
            let (admin, directory) = (server.admin, server.directory)
            _ = try await admin.createApp(NewApp(id: "shop", name: "Shop", platform: .ios, bundleId: "com.example.shop", teamId: "ABCDE12345"))
            _ = try await admin.publish(.schema, app: "shop", document: SchemaDocument.document(sdl: Self.schema), message: nil, expecting: .any)
            let http = KizunaHTTPClient(baseURL: URL(string: server.url)!)
            let _: SessionGrant = try await http.send(
                "POST", "/v1/auth/sign-up", body: Credentials(identifier: "mio@example.com", password: "correct horse battery"))
            func query(_ arguments: [String]) async throws { try await server.kizuna(["data", "query", "--app", "shop"] + arguments) }
            let file = directory.appendingPathComponent("query.graphql")
            let variables = directory.appendingPathComponent("variables.json")

            // The operator reads a model no rule opens; the account it runs as does not (its answer has errors: exit 1).
            try Data("{ listSecrets { items { id text } nextToken } }\n".utf8).write(to: file)
            try await query(["-f", file.path])
            try await query(["-f", file.path, "--json"])
            await #expect(throws: ExitCode.failure) { try await query(["-f", file.path, "--as", "mio@example.com"]) }
            let asOperator = try await admin.query("{ listSecrets { items { id } } }", app: "shop")
            #expect(asOperator["data"]?["listSecrets"]?["items"] == [] && asOperator["errors"] == nil)
            let asMio = try await admin.query("{ listSecrets { items { id } } }", app: "shop", asUser: "mio@example.com")
            #expect(asMio["errors"]?.arrayValue?.first?["extensions"]?["code"] == "forbidden")

            // Variables inline or from a file, an operation by name, as an account whose owner rule lets it in.
            try Data("query Page($limit: Int) { listNotes(limit: $limit) { items { id } nextToken } }\nquery Other { __typename }\n".utf8)
                .write(to: file)
            try Data(#"{"limit": 1}"#.utf8).write(to: variables)
            try await query(["-f", file.path, "--operation-name", "Page", "--variables", #"{"limit": 5}"#, "--as", "mio@example.com"])
            try await query(["-f", file.path, "--operation-name", "Page", "--variables", "@\(variables.path)"])
            await #expect(throws: ExitCode.failure) { try await query(["-f", file.path]) }  // two operations, none named

            // An unknown account is the server's not_found (exit 1); variables that are not an object never leave.
            await #expect(throws: ExitCode.failure) {
                try await query(["-f", file.path, "--operation-name", "Page", "--as", "nobody@example.com"])
            }
            for bad in ["[1]", "{", "@\(directory.appendingPathComponent("missing.json").path)"] {
                let refused = await #expect(throws: (any Error).self) { try await query(["-f", file.path, "--variables", bad]) }
                #expect(refused.map { Kizuna.exitCode(for: $0) } == ExitCode.validationFailure, "\(bad)")
            }
            let empty = await #expect(throws: (any Error).self) { try await query(["-f", file.path, "--as", ""]) }
            #expect(empty.map { Kizuna.exitCode(for: $0) } == ExitCode.validationFailure)
        }
    }
}
