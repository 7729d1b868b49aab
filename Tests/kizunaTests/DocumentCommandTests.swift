import ArgumentParser
import Foundation
import Hummingbird
import KizunaClient
import KizunaCore
import Logging
import ServiceLifecycle
import Testing

@testable import KizunaServer
@testable import kizuna

/// `kizuna config …` and `kizuna gate …`, run in-process against a real server on a loopback port.
@Suite("kizuna config and gate")
struct DocumentCommandTests {
    @Test func configAndGateCommandsDriveTheAdminAPI() async throws {
        try await CLIServer.run { server in
            let (admin, directory) = (server.admin, server.directory)
            _ = try await admin.createApp(NewApp(id: "shop", name: "Shop", platform: .ios, bundleId: "com.example.shop", teamId: "ABCDE12345"))
            func kizuna(_ arguments: [String]) async throws { try await server.kizuna(arguments + ["--app", "shop"]) }

            // config set creates and changes parameters, one version each.
            try await kizuna(["config", "set", "greeting", "hello", "--type", "string", "-m", "first"])
            try await kizuna(["config", "set", "limits", #"{"cart":20}"#, "--type", "json"])
            try await kizuna(["config", "set", "greeting", "こんにちは"])
            let live = try await admin.document(.config, app: "shop")
            #expect(live.version == 3 && live.message == "Set greeting")
            #expect(live.document["parameters"]?["greeting"]?["default"] == "こんにちは")
            #expect(live.document["parameters"]?["limits"]?["default"] == ["cart": 20])
            await #expect(throws: ValidationError.self) { try await kizuna(["config", "set", "new", "1"]) }

            // publish from a file, refused when invalid (nothing changes) and when the expected version is stale.
            let file = directory.appendingPathComponent("template.json")
            try Data(#"{"parameters":{"greeting":{"type":"number","default":"x"}}}"#.utf8).write(to: file)
            await #expect(throws: ExitCode.failure) { try await kizuna(["config", "publish", "-f", file.path, "--validate-only"]) }
            await #expect(throws: ExitCode.failure) { try await kizuna(["config", "publish", "-f", file.path]) }
            try Data(#"{"parameters":{"greeting":{"type":"string","default":"v4"}}}"#.utf8).write(to: file)
            await #expect(throws: ExitCode.failure) { try await kizuna(["config", "publish", "-f", file.path, "--expect-version", "2"]) }
            #expect(try await admin.document(.config, app: "shop").version == 3)
            try await kizuna(["config", "publish", "-f", file.path, "--expect-version", "3", "-m", "from a file"])
            try await kizuna(["config", "history"])
            try await kizuna(["config", "diff", "1", "4"])
            try await kizuna(["config", "show", "2"])
            try await kizuna(["config", "get", "greeting"])
            try await kizuna(["config", "rollback", "1"])
            let rolledBack = try await admin.document(.config, app: "shop")
            #expect(rolledBack.version == 5 && rolledBack.rollbackOf == 1 && rolledBack.document["parameters"]?["greeting"]?["default"] == "hello")

            // gate set / check: the CI use.
            try await kizuna(["gate", "set", "--minimum-version", "3.10.0", "--block", "3.10.1", "-m", "3.9 crashes"])
            await #expect(throws: ExitCode(3)) { try await kizuna(["gate", "check", "--app-version", "3.9.0", "--fail-if-blocking"]) }
            await #expect(throws: ExitCode(3)) { try await kizuna(["gate", "check", "--app-version", "3.10.1", "--fail-if-blocking"]) }
            try await kizuna(["gate", "check", "--app-version", "3.10.2", "--fail-if-blocking", "--locale", "ja-JP", "--json"])
            try await kizuna(["gate", "set", "--unblock", "3.10.1", "--maintenance", "on"])
            let policy = try await admin.document(.gate, app: "shop")
            #expect(policy.version == 2 && policy.document == ["minimumVersion": "3.10.0", "maintenance": ["active": true]])
            try await kizuna(["gate", "show"])
            try await kizuna(["gate", "rollback", "1"])
            #expect(try await admin.checkGate(app: "shop", device: DeviceContext(appVersion: "3.10.1")).action == .require)

            // A typo'd app id fails (exit 1) instead of printing an empty document.
            for command in [["config", "show"], ["config", "history"], ["gate", "show"], ["config", "get", "greeting"]] {
                await #expect(throws: ExitCode.failure, "\(command)") { try await server.kizuna(command + ["--app", "shpo"]) }
            }
        }
    }

    @Test func gateSetNeedsAChangeAndValidVersions() throws {
        #expect(throws: (any Error).self) { try Kizuna.parseAsRoot(["gate", "set", "--app", "shop"]) }
        #expect { try Kizuna.parseAsRoot(["gate", "set", "--minimum-version", "v2"]) } throws: { "\($0)".contains("\"v2\"") }
        let set = try #require(try Kizuna.parseAsRoot(["gate", "set", "--block", "2.0", "--clear", "recommendedVersion"]) as? GateCommand.SetFields)
        #expect(
            set.apply(to: ["recommendedVersion": "2.1", "blockedVersions": ["1.0"]]) == ["blockedVersions": ["1.0", "2.0"]])
    }

    @Test func gateCheckNeedsNoTokenAndTypesAttributes() throws {
        let check = try #require(
            try Kizuna.parseAsRoot([
                "gate", "check", "--app-version", "1.0", "--attribute", "pro=true", "--attribute", "age=30", "--attribute", "plan=gold",
            ])
                as? GateCommand.Check)
        let context = try check.device.context()
        #expect(context.attributes == ["pro": .bool(true), "age": .number(30), "plan": .string("gold")])
        #expect(throws: ValidationError.self) { try check.target.server.client(Environment(values: [:])) }
        _ = try check.target.server.client(Environment(values: [:]), requireToken: false)
        let bad = try #require(try Kizuna.parseAsRoot(["gate", "check", "--app-version", "1", "--attribute", "=x"]) as? GateCommand.Check)
        #expect(throws: ValidationError.self) { try bad.device.context() }
    }
}
