import ArgumentParser
import Foundation
import KizunaClient
import KizunaCore
import KizunaTestSupport
import Subprocess
import Testing

@testable import kizuna

#if canImport(System)
    import System
#else
    import SystemPackage
#endif

/// `kizuna release inspect` on `.ipa` files the test zips (with /usr/bin/zip) from fixtures built byte by byte.
@Suite("IPAInspect command")
struct IPAInspectCommandTests {
    static let team = "TEAM12345A"

    /// Writes `files` under a fresh directory and zips `Payload` into `App.ipa`; answers its path.
    static func ipa(_ files: [String: Data]) async throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kizuna-ipa-\(UUID().uuidString)")
        for (path, data) in files {
            let url = directory.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: url)
        }
        let result = try await Subprocess.run(
            .path("/usr/bin/zip"), arguments: ["-qr", "App.ipa", "Payload"], workingDirectory: FilePath(directory.path), output: .discarded)
        #expect(result.terminationStatus.isSuccess)
        return directory.appendingPathComponent("App.ipa").path
    }

    /// A Shop app: its main binary thin, a framework fat and clean, a widget fat with a private name in one slice.
    static func shop(
        main: [String] = ["viewDidLoad", "_terminateWithStatus:"], expires: TimeInterval = 365 * 86_400, bundleId: String = "com.example.shop",
        mainBinary: Data? = nil
    ) -> [String: Data] {
        let profile = ReleaseFixtures.profile(
            team: team, appID: "\(team).\(bundleId)", expires: Date().addingTimeInterval(expires), domains: ["applinks:127.0.0.1"])
        let widget = ReleaseFixtures.fat([
            (ReleaseFixtures.arm64, ReleaseFixtures.machO(methodNames: ["timeline"])),
            (ReleaseFixtures.x86_64, ReleaseFixtures.machO(methodNames: ["_performMemoryWarning"], cpuType: ReleaseFixtures.x86_64)),
        ])
        return [
            "Payload/Shop.app/Info.plist": ReleaseFixtures.infoPlist(bundleId: bundleId, executable: "Shop", binary: true),
            "Payload/Shop.app/embedded.mobileprovision": ReleaseFixtures.signedData(profile, indefinite: true),
            "Payload/Shop.app/Shop": mainBinary ?? ReleaseFixtures.machO(methodNames: main),
            "Payload/Shop.app/Frameworks/Kit.framework/Kit": ReleaseFixtures.fat(
                [
                    (ReleaseFixtures.arm64, ReleaseFixtures.machO(methodNames: ["render"])),
                    (ReleaseFixtures.x86_64, ReleaseFixtures.machO(methodNames: ["render"])),
                ]),
            "Payload/Shop.app/Frameworks/Kit.framework/Info.plist": ReleaseFixtures.infoPlist(bundleId: "com.example.kit", executable: "Kit"),
            "Payload/Shop.app/PlugIns/Widget.appex/Info.plist": ReleaseFixtures.infoPlist(bundleId: "\(bundleId).widget", executable: "ShopWidget"),
            "Payload/Shop.app/PlugIns/Widget.appex/ShopWidget": widget,
        ]
    }

    @Test("the report: Info.plist, profile, entitlements, and private selectors with their binary paths in thin and fat files")
    func report() async throws {
        let path = try await Self.ipa(Self.shop())
        let inspection = try await IPAInspector.inspect(IPAArchive(path: path), registry: nil)
        #expect(inspection.bundlePath == "Payload/Shop.app")
        #expect(
            inspection.info == BundleInfo(bundleId: "com.example.shop", version: "3.0.0", build: "4321", minimumOSVersion: "17.0", executable: "Shop")
        )
        #expect(inspection.profile?.teamIdentifiers == [Self.team])
        #expect(inspection.profile?.associatedDomains == ["applinks:127.0.0.1"])
        #expect(inspection.profile?.apsEnvironment == "production")
        #expect(
            Set(inspection.binaries) == [
                "Payload/Shop.app/Shop", "Payload/Shop.app/Frameworks/Kit.framework/Kit", "Payload/Shop.app/PlugIns/Widget.appex/ShopWidget",
            ])
        #expect(
            Set(inspection.privateSelectors) == [
                SelectorFinding(binary: "Payload/Shop.app/Shop", selector: "_terminateWithStatus:", severity: .error, architectures: ["arm64"]),
                SelectorFinding(
                    binary: "Payload/Shop.app/PlugIns/Widget.appex/ShopWidget", selector: "_performMemoryWarning", severity: .error,
                    architectures: ["x86_64"]),
            ])
        #expect(inspection.checks.filter { $0.status == .error }.isEmpty)
        #expect(inspection.checks.first { $0.id == "release.unreleased" }?.status == .skipped)
        let text = ReleaseInspectCommand.report(inspection)
        #expect(text.contains("  ✗ _terminateWithStatus:  Payload/Shop.app/Shop (arm64)"))
        #expect(text.contains("  ✓ profile.expiry: the profile is valid until"))
        #expect(text.contains("  bundle id               com.example.shop"))
        // The denylisted selector fails the default --fail-on error.
        await #expect(throws: ExitCode.failure) { try await Self.run(["release", "inspect", path]) }
    }

    @Test("a clean archive exits 0; a warning fails only --fail-on warning; an expired profile fails")
    func exitCodes() async throws {
        try await Self.run([
            "release", "inspect", try await Self.ipa(Self.shop(main: ["viewDidLoad"]).filter { !$0.key.contains("Widget") }), "--json",
        ])
        let warned = try await Self.ipa(Self.shop(main: ["viewDidLoad", "_myHelper"]).filter { !$0.key.contains("Widget") })
        try await Self.run(["release", "inspect", warned])
        await #expect(throws: ExitCode.failure) { try await Self.run(["release", "inspect", warned, "--fail-on", "warning"]) }
        let expired = try await Self.ipa(Self.shop(main: ["viewDidLoad"], expires: -86_400).filter { !$0.key.contains("Widget") })
        let inspection = try await IPAInspector.inspect(IPAArchive(path: expired), registry: nil)
        #expect(inspection.checks.first { $0.id == "profile.expiry" }?.status == .error)
        await #expect(throws: ExitCode.failure) { try await Self.run(["release", "inspect", expired]) }
        await #expect(throws: ExitCode(2)) { try await Self.run(["release", "inspect", "/nonexistent/App.ipa"]) }
    }

    @Test("a malformed main binary is an error naming it, not a crash")
    func malformed() async throws {
        let path = try await Self.ipa(Self.shop(mainBinary: Data("#!/bin/sh\n".utf8)))
        let inspection = try await IPAInspector.inspect(IPAArchive(path: path), registry: nil)
        #expect(
            inspection.checks.contains(
                ReleaseCheck("binary.readable", .error, "Payload/Shop.app/Shop: Malformed Mach-O: not a Mach-O file (no Mach-O or fat magic number).")
            ))
    }

    @Test("against a live server: a bundle id that is not the app's is flagged, the matching one passes")
    func againstServer() async throws {
        let matching = try await Self.ipa(Self.shop(main: ["viewDidLoad"]))
        let foreign = try await Self.ipa(Self.shop(main: ["viewDidLoad"], bundleId: "com.example.other"))
        try await CLIServer.run { server in
            _ = try await server.admin.createApp(NewApp(id: "shop", name: "Shop", platform: .ios, bundleId: "com.example.shop", teamId: Self.team))
            try await server.admin.setAssociatedDomains(app: "shop", AssociatedDomainSettings(webCredentials: false, appLinks: [.init(path: "/*")]))
            let checks = try await Self.inspect(server, matching)
            #expect(checks["app.bundle-id"] == .passed)
            #expect(checks["app.team-id"] == .passed)
            #expect(checks["app.associated-domains"] == .passed)
            #expect(checks["app.push-environment"] == .warning)
            #expect(try await Self.inspect(server, foreign)["app.bundle-id"] == .error)
            await #expect(throws: ExitCode.failure) { try await server.kizuna(["release", "inspect", foreign, "--app", "shop"]) }
        }
    }

    static func inspect(_ server: CLIServer, _ path: String) async throws -> [String: ReleaseCheck.Status] {
        let command = try #require(
            try Kizuna.parseAsRoot(["release", "inspect", path, "--app", "shop", "--server", server.url, "--token", server.token])
                as? ReleaseInspectCommand)
        let inspection = try await command.inspect(Environment(values: [:]))
        return Dictionary(uniqueKeysWithValues: inspection.checks.map { ($0.id, $0.status) })
    }

    static func run(_ arguments: [String]) async throws {
        let command = try #require(try Kizuna.parseAsRoot(arguments) as? ReleaseInspectCommand)
        try await command.run()
    }
}
