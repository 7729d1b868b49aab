import ArgumentParser
import Crypto
import Foundation
import KizunaClient
import KizunaCore
import KizunaTestSupport
import SQLKit
import Subprocess
import Testing

@testable import KizunaServer
@testable import kizuna

/// `kizuna push …` against a running server whose APNs is a local one, and a real `kizuna serve` killed with
/// SIGKILL while APNs holds some answers: restarted on the same store, it sends what was not answered and nothing else.
@Suite("kizuna push")
struct PushCommandTests {
    static let keyId = "KEY123ABCD"
    static let teamId = "TEAM12345A"

    /// A signing key and a local APNs that trusts it.
    static func apns() async throws -> (P256.Signing.PrivateKey, APNsTestServer) {
        let key = P256.Signing.PrivateKey()
        let server = try await APNsTestServer.start(
            expecting: .init(publicKey: key.publicKey, keyId: keyId, teamId: teamId, topic: "com.example.shop"))
        return (key, server)
    }

    static func token(_ n: Int) -> String { String(format: "%064x", n + 0x2000) }

    /// Registers installs directly in the SQLite store of `dataDirectory` (as the device route would), beside the
    /// running server.
    static func register(_ count: Int, dataDirectory: String) async throws {
        let database = try KizunaDatabase(location: .sqlite(dataDirectory: dataDirectory))
        let now = EpochMillis.now
        do {
            try await database.transaction { db in
                for n in 1...count {
                    try await db.raw(
                        """
                        INSERT INTO push_devices (app_id, install_id, token, environment, locale, registered_at)
                        VALUES ('shop', \(bind: "i\(n)"), \(bind: token(n)), 'production', 'ja-JP', \(bind: now))
                        """
                    ).run()
                }
            }
        } catch {
            await database.shutdown()
            throw error
        }
        await database.shutdown()  // closed here, not by deinit on some event loop
    }

    @Test func theCommandsSetCredentialsSendFollowAndCancel() async throws {
        let (key, apns) = try await Self.apns()
        try await CLIServer.run(configure: { configuration in
            configuration.push.productionURL = apns.url
            configuration.push.sandboxURL = apns.url
            configuration.push.trustRootsPEM = apns.certificateAuthorityPEM
        }) { cli in
            _ = try await cli.admin.createApp(
                NewApp(id: "shop", name: "Shop", platform: .ios, bundleId: "com.example.shop", teamId: "ABCDE12345"))
            let p8 = cli.directory.appendingPathComponent("AuthKey.p8")
            try key.pemRepresentation.write(to: p8, atomically: true, encoding: .utf8)
            try await cli.kizuna(["push", "credentials", "set", "--app", "shop", "--p8", p8.path, "--key-id", Self.keyId, "--team-id", Self.teamId])
            try await cli.kizuna(["push", "credentials", "show", "--app", "shop"])
            #expect(try await cli.admin.pushCredentials(app: "shop").keyId == Self.keyId)
            try await Self.register(3, dataDirectory: cli.directory.path)
            try await cli.kizuna(["push", "devices", "--app", "shop"])

            try await cli.kizuna([
                "push", "send", "--app", "shop", "--install", "i1", "--install", "i2", "--title", "Hello", "--title-in", "ja=こんにちは", "--body", "Hi",
            ])
            await apns.waitFor(count: 2)
            let job = try #require(try await cli.admin.pushJobs(app: "shop").first)
            #expect(job.target == .installs(["i1", "i2"]) && job.message.title == PushText("Hello", localized: ["ja": "こんにちは"]))
            let titles = try apns.received.map { try JSONDecoder().decode(JSONValue.self, from: $0.payload)["aps"]?["alert"]?["title"] }
            #expect(titles == [.string("こんにちは"), .string("こんにちは")])
            try await cli.kizuna(["push", "status", job.id, "--deliveries"])
            try await cli.kizuna(["push", "jobs", "--app", "shop"])

            // A send for later can be cancelled; nothing of it goes out.
            try await cli.kizuna(["push", "send", "--app", "shop", "--all", "--body", "Later", "--at", "2099-01-01T09:00:00Z"])
            let later = try #require(try await cli.admin.pushJobs(app: "shop").first)
            #expect(later.state == .scheduled)
            try await cli.kizuna(["push", "cancel", later.id])
            #expect(try await cli.admin.pushJob(later.id).state == .cancelled && apns.count == 2)
        }
        await apns.stop()
    }

    @Test func sendNeedsExactlyOneTargetAndReadsItsTexts() throws {
        #expect(throws: (any Error).self) { try Kizuna.parseAsRoot(["push", "send", "--app", "shop", "--body", "Hi"]) }
        #expect(throws: (any Error).self) { try Kizuna.parseAsRoot(["push", "send", "--app", "shop", "--all", "--user", "u", "--body", "Hi"]) }
        let parsed = try #require(
            try Kizuna.parseAsRoot([
                "push", "send", "--app", "shop", "--where", #"{"appVersion":{">=":"2.0"}}"#, "--body", "Hi", "--body-in", "ja=やあ", "--at",
                "2026-12-01T09:00", "--local-time", "--time-zone", "Asia/Tokyo", "--data", #"{"room":"r1"}"#,
            ]) as? PushCommand.Send)
        let request = try parsed.request()
        #expect(request.target == .condition(.object(["appVersion": .object([">=": .string("2.0")])])))
        #expect(request.message.body == PushText("Hi", localized: ["ja": "やあ"]) && request.message.data == ["room": .string("r1")])
        #expect(request.sendAt == "2026-12-01T09:00" && request.localTime == true && request.fallbackTimeZone == "Asia/Tokyo")
    }

    @Test func aServerKilledMidSendSendsOnlyWhatWasNotAnsweredAfterARestart() async throws {
        let (key, apns) = try await Self.apns()
        let devices = 60
        let held = 1...10
        for n in held { apns.script(Self.token(n), [.hold]) }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kizuna-push-kill-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let authority = directory.appendingPathComponent("apns-ca.pem")
        try apns.certificateAuthorityPEM.write(to: authority, atomically: true, encoding: .utf8)
        let data = directory.appendingPathComponent("data").path
        let arguments = ["serve", "--port", "0", "--data-dir", data, "--apns-url", apns.url, "--apns-ca-file", authority.path]

        let ((token, jobId), killed) = try await ServeProcess.run(arguments) { first in
            let port = try #require(await first.port())
            let token = try #require(
                await first.find { (line: String) -> String? in line.split(separator: " ").first { $0.hasPrefix("kza_") }.map(String.init) })
            #expect(await first.find { $0.contains("Ready") ? true : nil } == true)
            let admin = AdminClient(server: URL(string: "http://127.0.0.1:\(port)")!, token: token)
            _ = try await admin.createApp(NewApp(id: "shop", name: "Shop", platform: .ios, bundleId: "com.example.shop", teamId: "ABCDE12345"))
            try await admin.setPushCredentials(app: "shop", PushCredentialsUpload(p8: key.pemRepresentation, keyId: Self.keyId, teamId: Self.teamId))
            try await Self.register(devices, dataDirectory: data)
            let job = try await admin.sendPush(
                app: "shop", PushSendRequest(target: .all, message: PushMessage(body: PushText("Hi"), collapseId: "hi")))
            // Every notification reached APNs; the answered ones are recorded, the held ones wait on their answers.
            await apns.waitFor(count: devices)
            while try await admin.pushJob(job.id).totals.sent < devices - held.count {}
            await first.stop(.kill)
            return (token, job.id)
        }
        #expect(killed == .signaled(SIGKILL))

        let (_, stopped) = try await ServeProcess.run(arguments) { second in
            let port = try #require(await second.port())
            #expect(await second.find { $0.contains("Ready") ? true : nil } == true)
            let admin = AdminClient(server: URL(string: "http://127.0.0.1:\(port)")!, token: token)
            // The restarted server takes over what the dead one held and sends it; nothing answered is sent again.
            var job = try await admin.pushJob(jobId)
            while job.state != .done { job = try await admin.pushJob(jobId) }
            #expect(job.totals == .init(devices: devices, pending: 0, sent: devices, failed: 0, skipped: 0))
            var counts: [String: Int] = [:]
            for notification in apns.received { counts[notification.token, default: 0] += 1 }
            for n in 1...devices { #expect(counts[Self.token(n)] == (held.contains(n) ? 2 : 1), "device \(n)") }
            let deliveries = try await admin.pushDeliveries(job: jobId, limit: 1000).deliveries
            #expect(deliveries.filter { $0.attempts == 2 }.map(\.installId).sorted() == held.map { "i\($0)" }.sorted())
            await second.stop(.terminate)
        }
        #expect(stopped == .exited(0))
        await apns.stop()
    }
}
