import ArgumentParser
import Crypto
import Foundation
import KizunaClient
import KizunaCore
import Subprocess
import Testing

@testable import KizunaServer
@testable import kizuna

/// The update gate when Kizuna itself is down: a real `kizuna serve --mirror-dir` publishes, stops, and nginx serves
/// the mirror directory to the SDK.
@Suite("Gate mirrors")
struct GateMirrorTests {
    static func temporary(_ name: String) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("kizuna-\(name)-\(UUID().uuidString)")
    }

    @Test(.enabled(if: Nginx.shouldRun, "nginx is not installed (apt-get install nginx); CI installs it"))
    func aMaintenancePublishedBeforeTheStopReachesAFreshSDKThroughNginx() async throws {
        let (data, mirrors, onDemand) = (Self.temporary("data"), Self.temporary("mirrors"), Self.temporary("on-demand"))
        defer { for directory in [data, mirrors, onDemand] { try? FileManager.default.removeItem(at: directory) } }
        let shop = mirrors.appendingPathComponent("shop")

        let ((port, key), stopped) = try await ServeProcess.run(["serve", "--port", "0", "--data-dir", data.path, "--mirror-dir", mirrors.path]) {
            server in
            let port = try #require(await server.port())
            let token = try #require(await server.find { $0.split(separator: " ").first { $0.hasPrefix("kza_") }.map(String.init) })
            #expect(await server.find { $0.contains("Ready") ? true : nil } == true)
            let url = try #require(URL(string: "http://127.0.0.1:\(port)"))
            let admin = AdminClient(server: url, token: token)
            _ = try await admin.createApp(NewApp(id: "shop", name: "Shop", platform: .ios, bundleId: "com.example.shop", teamId: "ABCDE12345"))
            _ = try await admin.publish(.gate, app: "shop", document: .object(["minimumVersion": "1.0"]), message: "v1", expecting: .any)
            // Version 1's signed file, kept to replay later.
            try FileManager.default.copyItem(at: shop.appendingPathComponent("gate.json"), to: shop.appendingPathComponent("old.json"))
            let maintenance =
                #"{"maintenance": {"active": true}, "notices": {"maintenance": {"url": null, "texts": {"en": {"title": "Down for maintenance", "message": "Back at 3:00"}}}}}"#
            let document = try JSONDecoder().decode(JSONValue.self, from: Data(maintenance.utf8))
            _ = try await admin.publish(.gate, app: "shop", document: document, message: "incident", expecting: .version(1))
            // The CLI writes the same file on demand.
            let command = try Kizuna.parseAsRoot([
                "gate", "mirror", "--out", onDemand.path, "--app", "shop", "--server", url.absoluteString, "--token", token,
            ])
            var run = try #require(command as? any AsyncParsableCommand)
            try await run.run()
            let key = try await admin.gateMirrorKey()
            await server.stop(.terminate)
            return (port, key)
        }
        #expect(stopped == .exited(0))
        let trusted = [try GateMirror.publicKey(key.publicKey)]
        let written = try GateMirror.verify(Data(contentsOf: shop.appendingPathComponent("gate.json")), trusting: trusted, app: "shop")
        let cli = try GateMirror.verify(Data(contentsOf: onDemand.appendingPathComponent("shop/gate.json")), trusting: trusted, app: "shop")
        #expect(written.version == 2 && cli.version == 2 && cli.policy == written.policy)
        try Self.tamper(shop.appendingPathComponent("gate.json"), into: shop.appendingPathComponent("tampered.json"))

        let server = try #require(URL(string: "http://127.0.0.1:\(port)"))  // nobody listens there now
        try await Nginx.serve(mirrors) { nginx in
            func gate(_ directory: URL, _ file: String) throws -> UpdateGate {
                let app = try KizunaApp(
                    server: server, appId: "shop", directory: directory, device: DeviceContext(appVersion: "2.0", locale: "en-US"),
                    timeout: .seconds(5))
                return UpdateGate(
                    app: app, mirror: try GateMirrorSettings(urls: [nginx.appendingPathComponent("shop/\(file)")], publicKeys: [key.publicKey]))
            }
            // A device that never reached the server hears of the maintenance through the mirror.
            let device = Self.temporary("device")
            defer { try? FileManager.default.removeItem(at: device) }
            let fresh = try await gate(device, "gate.json").check()
            #expect(fresh.source == .mirror && fresh.decision.action == .maintenance && fresh.shouldPresent)
            #expect(fresh.decision.title == "Down for maintenance" && fresh.decision.url == nil && fresh.decision.policyVersion == 2)

            // Version 1 replayed, though signed, does not lift the maintenance the device holds.
            let replayed = try await gate(device, "old.json").check()
            #expect(replayed.source == .cachedPolicy && replayed.decision.action == .maintenance && replayed.mirrorProblem == nil)

            // An altered file is refused with a clear error, and decides nothing.
            let other = Self.temporary("other-device")
            defer { try? FileManager.default.removeItem(at: other) }
            let tampered = try await gate(other, "tampered.json").check()
            #expect(tampered.source == .noPolicy && tampered.decision.action == .none)
            #expect(tampered.mirrorProblem?.code == .badSignature && tampered.mirrorProblem?.message.contains("altered") == true)
        }
    }

    /// The first step of rotating the key: a new key file, created once (mode 0600), its public half printed.
    @Test func aNewKeyFileIsCreatedOnceWithoutAServer() async throws {
        let directory = Self.temporary("key")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("mirror-2027.key").path
        for _ in 0..<2 {
            var run = try #require(try Kizuna.parseAsRoot(["gate", "mirror", "--public-key", "--key-file", file]) as? any AsyncParsableCommand)
            try await run.run()
        }
        let permissions = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int
        #expect(permissions == 0o600)
        let key = try MirrorSigningKey(.file(file)).publicKey()
        #expect(try MirrorSigningKey(.file(file)).publicKey() == key, "read again, the same key")
        #expect(try GateMirror.publicKey(key.publicKey).rawRepresentation.count == 32)
        #expect(throws: (any Error).self) { try Kizuna.parseAsRoot(["gate", "mirror", "--key-file", file, "--out", directory.path]) }
    }

    /// Copies a mirror file with its policy emptied and its signature kept: what someone lifting a maintenance on a
    /// compromised static host would try.
    static func tamper(_ file: URL, into copy: URL) throws {
        var envelope = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
        let encoded = try #require(envelope["payload"] as? String).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        let payload = try #require(Data(base64Encoded: encoded + String(repeating: "=", count: (4 - encoded.count % 4) % 4)))
        var content = try #require(try JSONSerialization.jsonObject(with: payload) as? [String: Any])
        content["policy"] = [String: Any]()
        envelope["payload"] = try JSONSerialization.data(withJSONObject: content).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        try JSONSerialization.data(withJSONObject: envelope).write(to: copy)
    }
}
