import ArgumentParser
import Foundation
import KizunaClient
import KizunaCore
import Testing

@testable import KizunaServer
@testable import kizuna

/// `kizuna schema …`, run in-process against a real server on a loopback port.
@Suite("kizuna schema")
struct SchemaCommandTests {
    @Test func schemaCommandsPlanPublishAndRollBack() async throws {
        try await CLIServer.run { server in
            let (admin, directory) = (server.admin, server.directory)
            _ = try await admin.createApp(NewApp(id: "shop", name: "Shop", platform: .ios, bundleId: "com.example.shop", teamId: "ABCDE12345"))
            func kizuna(_ arguments: [String]) async throws { try await server.kizuna(arguments + ["--app", "shop"]) }
            let file = directory.appendingPathComponent("schema.graphql")

            try Data("type Note @model {\n  text: String!\n}\n".utf8).write(to: file)
            try await kizuna(["schema", "plan", "-f", file.path])
            try await kizuna(["schema", "publish", "-f", file.path, "-m", "notes"])
            let live = try await admin.document(.schema, app: "shop")
            #expect(live.version == 1 && live.message == "notes")
            #expect(try SchemaDocument.sdl(in: live.document).contains("type Note @model"))

            // Dropping the field is refused (exit 1) until allowed; the plan lists it either way.
            try Data("type Note @model {\n  title: String\n}\n".utf8).write(to: file)
            try await kizuna(["schema", "plan", "-f", file.path])
            await #expect(throws: ExitCode.failure) { try await kizuna(["schema", "publish", "-f", file.path]) }
            #expect(try await admin.document(.schema, app: "shop").version == 1)
            try await kizuna(["schema", "publish", "-f", file.path, "--allow-destructive"])
            #expect(try await admin.document(.schema, app: "shop").version == 2)

            // Invalid SDL is refused whole; show, history, diff and rollback work as for config and gate.
            try Data("type Note @model {\n  text: Strin\n}\n".utf8).write(to: file)
            await #expect(throws: ExitCode.failure) { try await kizuna(["schema", "publish", "-f", file.path, "--validate-only"]) }
            try await kizuna(["schema", "show"])
            try await kizuna(["schema", "show", "1"])
            try await kizuna(["schema", "history"])
            try await kizuna(["schema", "diff", "1", "2"])
            await #expect(throws: ExitCode.failure) { try await kizuna(["schema", "rollback", "1"]) }
            try await kizuna(["schema", "rollback", "1", "--allow-destructive"])
            #expect(try await admin.document(.schema, app: "shop").version == 3)
        }
    }
}

/// `kizuna schema jobs`: what a publish left to run in the background.
@Suite("kizuna schema jobs")
struct SchemaJobsCommandTests {
    @Test func jobsListsTheIndexAPublishLeft() async throws {
        try await CLIServer.run { server in
            let (admin, directory) = (server.admin, server.directory)
            _ = try await admin.createApp(NewApp(id: "shop", name: "Shop", platform: .ios, bundleId: "com.example.shop", teamId: "ABCDE12345"))
            func kizuna(_ arguments: [String]) async throws { try await server.kizuna(arguments + ["--app", "shop"]) }
            let file = directory.appendingPathComponent("schema.graphql")
            try await kizuna(["schema", "jobs"])  // none yet

            try Data("type Note @model {\n  text: String!\n}\n".utf8).write(to: file)
            try await kizuna(["schema", "publish", "-f", file.path])
            try Data("type Note @model {\n  text: String! @index(name: \"byText\")\n}\n".utf8).write(to: file)
            try await kizuna(["schema", "publish", "-f", file.path])
            try await kizuna(["schema", "jobs"])
            try await kizuna(["schema", "jobs", "--json", "--limit", "5"])
            let jobs = try await admin.schemaJobs(app: "shop")
            #expect(jobs.map(\.kind) == ["index"] && jobs.map(\.target) == ["byText"] && jobs.map(\.schemaVersion) == [2])
            let refused = await #expect(throws: (any Error).self) { try await kizuna(["schema", "jobs", "--limit", "0"]) }
            #expect(refused.map { Kizuna.exitCode(for: $0) } == ExitCode.validationFailure)
            let unknown = await #expect(throws: KizunaError.self) { try await admin.schemaJobs(app: "nope") }
            #expect(unknown?.code == .notFound)
        }
    }

    @Test func aJobIsOneLine() {
        let date = Date(timeIntervalSince1970: 1_738_314_000)
        let job = DataJobInfo(
            id: 12, schemaVersion: 3, kind: "backfill", model: "Message", target: "seenAt", state: "failed", done: 50, total: 200, attempts: 2,
            error: "SQLite: disk I/O error", createdAt: date, updatedAt: date, nextAttemptAt: date)
        #expect(
            jobLine(job) == "12  v3  backfill  Message.seenAt  failed  50/200 (25%) (attempt 2, next at 2025-01-31T09:00:00Z): SQLite: disk I/O error"
        )
    }
}

/// `kizuna app key …` and `kizuna user group …`.
@Suite("kizuna app key and user group")
struct AccessCommandTests {
    @Test func keysAndGroupsThroughTheCLI() async throws {
        try await CLIServer.run { server in
            let admin = server.admin
            _ = try await admin.createApp(NewApp(id: "shop", name: "Shop", platform: .ios, bundleId: "com.example.shop", teamId: "ABCDE12345"))
            try await server.kizuna(["app", "key", "create", "--expires-in-days", "7", "--name", "web", "--app", "shop"])
            let keys = try await admin.apiKeys(app: "shop")
            #expect(keys.count == 1 && keys[0].name == "web")
            try await server.kizuna(["app", "key", "list", "--app", "shop"])
            try await server.kizuna(["app", "key", "revoke", keys[0].id, "--app", "shop"])
            #expect(try await admin.apiKeys(app: "shop").first?.revokedAt != nil)
            let refused = await #expect(throws: (any Error).self) {
                try await server.kizuna(["app", "key", "create", "--expires-in-days", "0", "--app", "shop"])
            }
            #expect(refused.map { Kizuna.exitCode(for: $0) } == ExitCode.validationFailure)

            let http = KizunaHTTPClient(baseURL: URL(string: server.url)!)
            let _: SessionGrant = try await http.send(
                "POST", "/v1/auth/sign-up", body: Credentials(identifier: "mio@example.com", password: "correct horse battery"))
            try await server.kizuna(["user", "group", "add", "mio@example.com", "moderators"])
            try await server.kizuna(["user", "group", "list", "mio@example.com"])
            #expect(try await admin.groups(ofUser: "mio@example.com") == ["moderators"])
            try await server.kizuna(["user", "group", "rm", "mio@example.com", "moderators"])
            #expect(try await admin.groups(ofUser: "mio@example.com") == [])
        }
    }
}
