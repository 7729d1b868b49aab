import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KizunaCore
import NIOCore
import Testing

@testable import KizunaServer

/// `config:fetch` and `gate:check` serve answers encoded once per (document version, condition outcomes) and once per
/// (version, decision, tester): each answer must be byte for byte the one a fresh evaluation makes, for devices that
/// share an answer and devices that do not, and no answer may outlive a publish — on the instance that published and on
/// another one sharing the PostgreSQL store.
@Suite("Memoized device answers")
struct DeviceAnswerMemoTests {
    static let conditions = #"""
        [{"name":"new","when":{"appVersion":{">=":"3.10"}}},
         {"name":"ja","when":{"locale":["ja"]}},
         {"name":"rollout","when":{"percent":{"seed":"checkout","from":0,"to":40}}},
         {"name":"pro","when":{"attribute":{"name":"plan","string":{"==":"pro"}}}},
         {"name":"unused","when":{"country":["JP"]}}]
        """#
    static let first = #"""
        {"conditions":\#(conditions),"parameters":{
          "banner":{"type":"string","default":"Hello","conditionalValues":{"ja":"こんにちは","new":"Hi"}},
          "limit":{"type":"number","default":10,"conditionalValues":{"pro":100,"rollout":20}},
          "checkout":{"type":"bool","default":false,"conditionalValues":{"rollout":true}},
          "theme":{"type":"json","default":{"accent":"blue"},"conditionalValues":{"new":{"accent":"green"}}}}}
        """#
    // The same conditions, other values and one parameter more: every answer changes.
    static let second = #"""
        {"conditions":\#(conditions),"parameters":{
          "banner":{"type":"string","default":"Welcome","conditionalValues":{"ja":"ようこそ","new":"Hey"}},
          "limit":{"type":"number","default":15,"conditionalValues":{"pro":150,"rollout":25}},
          "checkout":{"type":"bool","default":true,"conditionalValues":{"rollout":false}},
          "theme":{"type":"json","default":{"accent":"red"},"conditionalValues":{"new":{"accent":"black"}}},
          "extra":{"type":"string","default":"x"}}}
        """#
    static let firstPolicy =
        #"{"minimumVersion":"3.0","blockedVersions":["3.9.1"],"maintenance":{"active":true,"allowInstallIds":["install-3","install-5"]}}"#
    static let secondPolicy =
        #"{"minimumVersion":"3.10","notices":{"require":{"texts":{"en":{"title":"Update","message":"Please update."},"ja":{"title":"アップデート","message":"更新してください。"}}}}}"#

    /// Forty devices: versions, locales, plans and install ids (so the rollout) varied, many sharing an answer.
    static let devices: [String] = (0..<40).map { index in
        let version = ["3.9.1", "3.9.2", "3.10.0", "4.0"][index % 4]
        let locale = ["ja-JP", "en-US", "fr-FR"][index % 3]
        let plan = index % 5 == 0 ? "pro" : "free"
        return
            #"{"appVersion":"\#(version)","osVersion":"17.5","platform":"ios","installId":"install-\#(index)","locale":"\#(locale)","country":"JP","attributes":{"plan":"\#(plan)"}}"#
    }

    /// The bytes a fresh evaluation of `template` makes for `device`.
    static func freshConfig(_ template: String, version: Int64, device: String) throws -> [UInt8] {
        let parsed = try RemoteConfigTemplate(parsing: try WireFormat.decoder().decode(JSONValue.self, from: Data(template.utf8)))
        let request = try WireFormat.decoder().decode(DeviceRequest.self, from: Data(device.utf8))
        let context = try EvaluationContext(device: request.device, appId: "shop")
        return Array(try WireFormat.canonicalEncoder().encode(ConfigValues(version: version, values: parsed.evaluate(context))))
    }

    /// The bytes a fresh decision under `policy` makes for `device`.
    static func freshGate(_ policy: String, version: Int64, device: String) throws -> [UInt8] {
        let parsed = try GatePolicy(parsing: try WireFormat.decoder().decode(JSONValue.self, from: Data(policy.utf8)))
        let request = try WireFormat.decoder().decode(DeviceRequest.self, from: Data(device.utf8))
        let context = try EvaluationContext(device: request.device, appId: "shop")
        let storeURL = "https://apps.apple.com/app/id1"
        let check = GateCheck(
            decision: parsed.decide(context, policyVersion: version, storeURL: storeURL), policy: parsed.source(visibleTo: request.device.installId),
            storeURL: storeURL)
        return Array(try WireFormat.canonicalEncoder().encode(check))
    }

    /// Every device asks twice (the second answer comes from the memo); each answer must be the fresh one, and the
    /// ETag the same both times.
    static func expectFresh(_ server: TestServer, config: String, configVersion: Int64, policy: String, gateVersion: Int64) async throws {
        for device in devices {
            for (route, fresh) in [
                ("config:fetch", try freshConfig(config, version: configVersion, device: device)),
                ("gate:check", try freshGate(policy, version: gateVersion, device: device)),
            ] {
                let once = try await server.send(.post, "/v1/apps/shop/\(route)", json: device, authorized: false)
                let twice = try await server.send(.post, "/v1/apps/shop/\(route)", json: device, authorized: false)
                #expect(Array(once.body.readableBytesView) == fresh, "\(route) for \(device): \(once.text)")
                #expect(Array(twice.body.readableBytesView) == fresh, "\(route) for \(device), memoized: \(twice.text)")
                #expect(once.headers[.eTag] != nil && once.headers[.eTag] == twice.headers[.eTag])
            }
        }
    }

    @Test(arguments: TestBackend.available)
    func everyAnswerIsTheFreshOneAcrossPublishes(_ backend: TestBackend) async throws {
        try await withTestServer(backend) { server in
            try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app)
            let config1 = try await UpdateGateTests.publish(server, "config", Self.first)
            let gate1 = try await UpdateGateTests.publish(server, "gate", Self.firstPolicy)
            try await Self.expectFresh(server, config: Self.first, configVersion: config1, policy: Self.firstPolicy, gateVersion: gate1)
            let before = try await server.send(.post, "/v1/apps/shop/config:fetch", json: Self.devices[0], authorized: false)

            let config2 = try await UpdateGateTests.publish(server, "config", Self.second)
            let gate2 = try await UpdateGateTests.publish(server, "gate", Self.secondPolicy)
            try await Self.expectFresh(server, config: Self.second, configVersion: config2, policy: Self.secondPolicy, gateVersion: gate2)
            // A device holding the old ETag gets the new answer, not 304.
            let etag = try #require(before.headers[.eTag])
            let after = try await server.send(
                .post, "/v1/apps/shop/config:fetch", json: Self.devices[0], headers: [.ifNoneMatch: etag], authorized: false)
            #expect(after.status == .ok && after.headers[.eTag] != etag)
            let same = try await server.send(
                .post, "/v1/apps/shop/config:fetch", json: Self.devices[0], headers: [.ifNoneMatch: try #require(after.headers[.eTag])],
                authorized: false)
            #expect(same.status == .notModified)
        }
    }

    @Test(arguments: TestBackend.available.filter { $0 == .postgres })
    func aPublishOnOneInstanceLeavesNoStaleAnswerOnTheOther(_ backend: TestBackend) async throws {
        // No polling: the change must come through LISTEN/NOTIFY.
        try await withTestServers(backend, configure: { $0.changePollInterval = .seconds(3600) }) { instanceA, instanceB in
            try await instanceA.send(.post, "/v1/admin/apps", json: UpdateGateTests.app)
            let config1 = try await UpdateGateTests.publish(instanceA, "config", Self.first)
            let gate1 = try await UpdateGateTests.publish(instanceA, "gate", Self.firstPolicy)
            // B fills its memos with version 1's answers, then hears of the publishes on A.
            try await Self.expectFresh(instanceB, config: Self.first, configVersion: config1, policy: Self.firstPolicy, gateVersion: gate1)
            var versions: (config: Int64, gate: Int64) = (0, 0)
            try await instanceB.feed.withSubscription { subscription in
                versions.config = try await UpdateGateTests.publish(instanceA, "config", Self.second)
                versions.gate = try await UpdateGateTests.publish(instanceA, "gate", Self.secondPolicy)
                var seen: Set<String> = []
                for await change in subscription.changes {
                    if (change.kind == "config" && change.version == versions.config) || (change.kind == "gate" && change.version == versions.gate) {
                        seen.insert(change.kind)
                    }
                    if seen.count == 2 { break }
                }
            }
            try await Self.expectFresh(
                instanceB, config: Self.second, configVersion: versions.config, policy: Self.secondPolicy, gateVersion: versions.gate)
        }
    }
}
