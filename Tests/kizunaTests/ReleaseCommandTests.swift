import ArgumentParser
import Foundation
import KizunaClient
import KizunaCore
import Subprocess
import Testing

@testable import kizuna

/// `kizuna release …` against a real `kizuna serve`: recording, artifacts streamed up and down, and blocking a
/// release through the gate's own publishing.
@Suite("kizuna release")
struct ReleaseCommandTests {
    static func kizuna(_ arguments: [String], server: URL, token: String) async throws {
        var command = try #require(
            try Kizuna.parseAsRoot(arguments + ["--app", "shop", "--server", server.absoluteString, "--token", token]) as? any AsyncParsableCommand)
        try await command.run()
    }

    @Test func recordUploadDownloadBlockAndUnblock() async throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("kizuna-release-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: work) }
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let archive = work.appendingPathComponent("Shop.xcarchive.zip")
        try Data((0..<(2 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 40_503 >> 5) }).write(to: archive)

        let (_, stopped) = try await ServeProcess.run(["serve", "--port", "0", "--data-dir", work.appendingPathComponent("data").path]) { server in
            let port = try #require(await server.port())
            let token = try #require(await server.find { $0.split(separator: " ").first { $0.hasPrefix("kza_") }.map(String.init) })
            #expect(await server.find { $0.contains("Ready") ? true : nil } == true)
            let url = try #require(URL(string: "http://127.0.0.1:\(port)"))
            let admin = AdminClient(server: url, token: token)
            _ = try await admin.createApp(NewApp(id: "shop", name: "Shop", platform: .ios, bundleId: "com.example.shop", teamId: "ABCDE12345"))

            try await Self.kizuna(
                ["release", "create", "3.10.1", "4321", "--channel", "testflight", "--notes", "Faster checkout"], server: url, token: token)
            let repeated = await #expect(throws: KizunaError.self) {
                try await Self.kizuna(["release", "create", "3.10.1", "4321"], server: url, token: token)
            }
            #expect(repeated?.code == .conflict)

            // Streamed up, listed with its checksum, streamed down byte for byte.
            try await Self.kizuna(["release", "upload", "3.10.1", archive.path], server: url, token: token)
            let release = try await admin.release(app: "shop", "3.10.1")
            #expect(release.tag == "v3.10.1-4321" && release.channel == .testflight)
            #expect(release.artifacts.map(\.name) == ["Shop.xcarchive.zip"] && release.artifacts.first?.size == 2 << 20)
            #expect(release.artifacts.first?.sha256 == (try FileDigest.sha256(of: archive)).sha256)
            let copy = work.appendingPathComponent("copy.zip")
            try await Self.kizuna(["release", "download", "3.10.1", "Shop.xcarchive.zip", "-o", copy.path], server: url, token: token)
            #expect(try Data(contentsOf: copy) == Data(contentsOf: archive))

            // Blocked through the gate's publishing: in its history with the message, deciding `require`.
            try await Self.kizuna(["release", "block", "3.10.1", "-m", "crashes at launch"], server: url, token: token)
            #expect(try await admin.history(.gate, app: "shop").first?.message == "crashes at launch")
            let decision = try await admin.checkGate(app: "shop", device: DeviceContext(appVersion: "3.10.1"))
            #expect(decision.action == .require && decision.reason == .blockedVersion)
            #expect(try await admin.release(app: "shop", "3.10.1").blocked)
            #expect(try await admin.checkGate(app: "shop", device: DeviceContext(appVersion: "3.10.2")).action == .none)

            try await Self.kizuna(["release", "unblock", "3.10.1"], server: url, token: token)
            #expect(try await admin.history(.gate, app: "shop").first?.message == "Unblock 3.10.1")
            #expect(try await admin.release(app: "shop", "3.10.1").blocked == false)
            #expect(try await admin.checkGate(app: "shop", device: DeviceContext(appVersion: "3.10.1")).action == .none)
            #expect(try await admin.diff(.gate, app: "shop", from: 1, to: 2).changes.isEmpty == false)

            try await Self.kizuna(["release", "rm", "3.10.1"], server: url, token: token)
            #expect(try await admin.releases(app: "shop").isEmpty)
            await server.stop(.terminate)
        }
        #expect(stopped == .exited(0))
    }
}
