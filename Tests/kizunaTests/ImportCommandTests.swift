import ArgumentParser
import Foundation
import KizunaClient
import KizunaCore
import Testing

@testable import kizuna

/// `kizuna config import --firebase` and `kizuna gate import --force-alert`, on the Firebase fixtures of
/// Tests/Fixtures/Firebase.
@Suite("kizuna config import and gate import")
struct ImportCommandTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../Fixtures/Firebase")
        .standardizedFileURL
    static let template = fixtures.appendingPathComponent("remote-config-template.json").path
    static let alert = fixtures.appendingPathComponent("force-update.json").path
    static let iosAppId = "1:1234567890:ios:0a1b2c3d4e5f6789"

    /// Runs a command without a server: nothing is listening on the default address, so a call to it would fail.
    static func offline(_ arguments: [String]) async throws {
        var command = try #require(try Kizuna.parseAsRoot(arguments + ["--server", "http://127.0.0.1:9"]) as? any AsyncParsableCommand)
        try await command.run()
    }

    static func json(at path: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
    }

    @Test func validateOnlyConvertsWithoutAServerAndFailsOnWhatItLeftOut() async throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("kizuna-import-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        // The audiences condition cannot be translated: exit 1, but the converted rest is still there to read.
        await #expect(throws: ExitCode.failure) {
            try await Self.offline(["config", "import", "--firebase", Self.template, "--validate-only", "--out", out])
        }
        let written = try Self.json(at: out)
        #expect(written == FirebaseTemplateImport(firebase: try Self.json(at: Self.template)).template)
        #expect(try RemoteConfigTemplate(parsing: written).conditions.count == 7)
        try await Self.offline([
            "config", "import", "--firebase", Self.template, "--firebase-app-id", Self.iosAppId, "--validate-only", "--allow-partial",
            "--out", out, "--json",
        ])
        #expect(try RemoteConfigTemplate(parsing: try Self.json(at: out)).conditions.map(\.name).last == "ios_app")
        try await Self.offline(["gate", "import", "--force-alert", Self.alert, "--language", "ja", "--validate-only"])
        try await Self.offline([
            "gate", "import", "--force-alert", Self.template, "--parameter", "force_update", "--language", "ja", "--validate-only",
        ])
        await #expect(throws: ValidationError.self) {
            try await Self.offline(["gate", "import", "--force-alert", Self.template, "--validate-only"])
        }
    }

    @Test func configImportPublishesOnlyACompleteTranslationUnlessAllowedPartial() async throws {
        try await CLIServer.run { server in
            let admin = server.admin
            _ = try await admin.createApp(NewApp(id: "shop", name: "Shop", platform: .ios, bundleId: "com.example.shop", teamId: "ABCDE12345"))
            func kizuna(_ arguments: [String]) async throws { try await server.kizuna(arguments + ["--app", "shop"]) }

            await #expect(throws: ExitCode.failure) { try await kizuna(["config", "import", "--firebase", Self.template]) }
            #expect(try await admin.document(.config, app: "shop").version == 0, "nothing is published while something is left out")

            try await kizuna([
                "config", "import", "--firebase", Self.template, "--firebase-app-id", Self.iosAppId, "--allow-partial", "-m", "from Firebase",
            ])
            let live = try await admin.document(.config, app: "shop")
            let expected = FirebaseTemplateImport(firebase: try Self.json(at: Self.template), translator: .init(firebaseAppId: Self.iosAppId))
            #expect(live.version == 1 && live.message == "from Firebase" && live.document == expected.template)
            let japan = try await admin.fetchConfig(
                app: "shop", device: DeviceContext(appVersion: "3.10.0", buildNumber: "451", platform: .ios, locale: "ja-JP", country: "JP"))
            #expect(japan.values["welcome_message"] == "ようこそ！" && japan.values["onboarding_steps"] == ["intro", "sign_up"])
            #expect(japan.values["new_checkout_enabled"] != nil && japan.values["discount_rate"] == 0.1)

            // The publish guard works as for `config publish`.
            await #expect(throws: ExitCode.failure) {
                try await kizuna([
                    "config", "import", "--firebase", Self.template, "--firebase-app-id", Self.iosAppId, "--allow-partial", "--expect-version", "0",
                ])
            }
            #expect(try await admin.document(.config, app: "shop").version == 1)
        }
    }

    @Test func gateImportSetsTheMinimumVersionAndNoticeOverTheLivePolicy() async throws {
        try await CLIServer.run { server in
            let admin = server.admin
            _ = try await admin.createApp(NewApp(id: "shop", name: "Shop", platform: .ios, bundleId: "com.example.shop", teamId: "ABCDE12345"))
            func kizuna(_ arguments: [String]) async throws { try await server.kizuna(arguments + ["--app", "shop"]) }

            try await kizuna(["gate", "set", "--nag-interval", "3600", "--block", "3.10.1"])
            try await kizuna(["gate", "import", "--force-alert", Self.alert, "--language", "ja"])
            let live = try await admin.document(.gate, app: "shop")
            #expect(live.version == 2 && live.message == "Imported the force-update alert")
            #expect(live.document["nagIntervalSeconds"] == 3600 && live.document["blockedVersions"] == ["3.10.1"])
            #expect(live.document["minimumVersion"] == "3.10.0" && live.document["defaultLanguage"] == "ja")

            let old = try await admin.checkGate(app: "shop", device: DeviceContext(appVersion: "3.9.0", locale: "ja-JP"))
            #expect(old.action == .require && old.title == "アップデートのお願い" && old.url == "https://apps.apple.com/app/id1234567890")
            #expect(try await admin.checkGate(app: "shop", device: DeviceContext(appVersion: "3.10.0")).action == .none)

            // A parameter that is not a force-update alert publishes nothing.
            let bad = server.directory.appendingPathComponent("bad-alert.json")
            try Data(#"{"title":"t","message":"m","version":"v3"}"#.utf8).write(to: bad)
            await #expect(throws: ExitCode.failure) { try await kizuna(["gate", "import", "--force-alert", bad.path]) }
            #expect(try await admin.document(.gate, app: "shop").version == 2)
        }
    }
}
