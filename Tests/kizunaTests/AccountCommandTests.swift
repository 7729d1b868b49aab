import ArgumentParser
import Foundation
import KizunaClient
import KizunaCore
import Testing

@testable import KizunaServer
@testable import kizuna

/// `kizuna user …` and `kizuna aasa …`, run in-process against a real server.
@Suite("kizuna user and aasa")
struct AccountCommandTests {
    @Test func userCommandsDriveTheAdminAPI() async throws {
        try await CLIServer.run { server in
            let sdk = KizunaHTTPClient(baseURL: URL(string: server.url)!)
            for name in ["mio@example.com", "sora"] {
                let _: SessionGrant = try await sdk.send(
                    "POST", "/v1/auth/sign-up", body: Credentials(identifier: name, password: "correct horse battery"))
            }
            try await server.kizuna(["user", "list"])
            try await server.kizuna(["user", "list", "--search", "example", "--json"])
            try await server.kizuna(["user", "show", "MIO@example.com"])

            try await server.kizuna(["user", "disable", "mio@example.com"])
            #expect(try await server.admin.user("mio@example.com").disabled)
            await #expect(throws: KizunaError.self) {
                let _: SessionGrant = try await sdk.send(
                    "POST", "/v1/auth/sign-in", body: Credentials(identifier: "mio@example.com", password: "correct horse battery"))
            }
            try await server.kizuna(["user", "enable", "mio@example.com"])
            #expect(try await server.admin.user("mio@example.com").disabled == false)

            try await server.kizuna(["user", "reset-password", "mio@example.com"])
            try await server.kizuna(["user", "rm", "sora"])
            await #expect(throws: KizunaError.self) { try await server.admin.user("sora") }
            await #expect(throws: ExitCode.failure) { try await server.kizuna(["user", "show", "nobody"]) }
        }
    }

    @Test func aasaCommandsShowAndChangeTheFile() async throws {
        try await CLIServer.run { server in
            _ = try await server.admin.createApp(NewApp(id: "shop", name: "Shop", platform: .ios, bundleId: "com.example.shop", teamId: "ABCDE12345"))
            let file = server.directory.appendingPathComponent("aasa.json")
            try Data(#"{"appLinks":[{"/":"/products/*"}],"legacyPaths":true}"#.utf8).write(to: file)
            try await server.kizuna(["aasa", "settings", "--app", "shop", "-f", file.path])
            try await server.kizuna(["aasa", "settings", "--app", "shop"])
            try await server.kizuna(["aasa", "show", "--app", "shop"])
            try await server.kizuna(["aasa", "show"])
            let served = try JSONDecoder().decode(AppSiteAssociation.self, from: try await server.admin.associationFile(app: nil))
            #expect(served.applinks?.details.first?.paths == ["/products/*"])
            #expect(served.webcredentials?.apps == ["ABCDE12345.com.example.shop"])
            try Data(#"{"appClips":["com.other.clip"]}"#.utf8).write(to: file)
            await #expect(throws: ExitCode.failure) { try await server.kizuna(["aasa", "settings", "--app", "shop", "-f", file.path]) }
        }
    }
}
