import Foundation
import KizunaCore
import KizunaTestSupport
import Logging
import Testing

@testable import KizunaClient
@testable import KizunaServer

/// A clock the test moves by hand.
final class TestClock: Sendable {
    private let current = Locked(Date(timeIntervalSince1970: 1_800_000_000))
    var now: Date { current.withLock { $0 } }
    func advance(by seconds: TimeInterval) { current.withLock { $0 += seconds } }
}

@Suite("UpdateGate against kizuna serve")
struct UpdateGateClientTests {
    @Test func requireStaysInForceOfflineAndAcrossLaunches() async throws {
        let directory = LiveServer.temporaryDirectory()
        let port = try await LiveServer.run { server in
            try await server.createShop()
            try await server.publish(.gate, #"{"minimumVersion":"3.10.0"}"#)
            let gate = UpdateGate(app: try server.app(version: "3.9.0", directory: directory))
            #expect(gate.current == nil)
            let check = try await gate.check()
            #expect(check.decision.action == .require && check.source == .server && check.shouldPresent)
            #expect(check.decision.url == "https://apps.apple.com/app/id1" && check.decision.language == "ja")

            let updated = UpdateGate(app: try server.app(version: "3.10.0"))
            #expect(try await updated.check().decision.action == .none)
            return server.port
        }
        // Relaunched with the server gone: blocked before any network answer, and the cached policy still decides.
        let offline = try KizunaApp(
            server: URL(string: "http://127.0.0.1:\(port)")!, appId: "shop", directory: directory,
            device: DeviceContext(appVersion: "3.9.0", locale: "en-US"), timeout: .seconds(2))
        let gate = UpdateGate(app: offline)
        #expect(gate.current?.action == .require)
        let check = try await gate.check()
        #expect(check.source == .cachedPolicy && check.decision.action == .require && check.decision.reason == .belowMinimumVersion)
        #expect(check.decision.language == "en" && check.decision.url == "https://apps.apple.com/app/id1" && check.decision.policyVersion == 1)
    }

    @Test func recommendRespectsTheNagIntervalAcrossLaunches() async throws {
        try await LiveServer.run { server in
            try await server.createShop()
            try await server.publish(.gate, #"{"recommendedVersion":"2.0","nagIntervalSeconds":3600}"#)
            let directory = LiveServer.temporaryDirectory()
            let clock = TestClock()
            let first = UpdateGate(app: try server.app(version: "1.0", directory: directory), now: { clock.now })
            let shown = try await first.check()
            #expect(shown.decision.action == .recommend && shown.shouldPresent)
            #expect(try await first.check().shouldPresent == false)

            clock.advance(by: 1800)
            let relaunched = UpdateGate(app: try server.app(version: "1.0", directory: directory), now: { clock.now })
            #expect(try await relaunched.check().shouldPresent == false, "half the interval later, after a relaunch")
            clock.advance(by: 1800)
            #expect(try await relaunched.check().shouldPresent == true)
        }
    }

    @Test func scheduledMaintenanceIsDecidedOfflineFromTheCachedPolicy() async throws {
        let directory = LiveServer.temporaryDirectory()
        let clock = TestClock()
        let start = ISO8601DateFormatter().string(from: clock.now.addingTimeInterval(3600))
        let end = ISO8601DateFormatter().string(from: clock.now.addingTimeInterval(7200))
        let port = try await LiveServer.run { server in
            try await server.createShop()
            try await server.publish(.gate, #"{"maintenance":{"window":{"from":"\#(start)","until":"\#(end)"},"allowInstallIds":["tester"]}}"#)
            let gate = UpdateGate(app: try server.app(version: "1.0", directory: directory), now: { clock.now })
            #expect(try await gate.check().decision.action == .none)
            return server.port
        }
        let offline = try KizunaApp(
            server: URL(string: "http://127.0.0.1:\(port)")!, appId: "shop", directory: directory, device: DeviceContext(appVersion: "1.0"))
        let gate = UpdateGate(app: offline, now: { clock.now })
        clock.advance(by: 3700)
        let during = try await gate.check()
        #expect(during.source == .cachedPolicy && during.decision.action == .maintenance && during.shouldPresent)
        clock.advance(by: 3600)
        #expect(try await gate.check().decision.action == .none)
    }

    @Test func aGatePublishReachesAConnectedListener() async throws {
        try await LiveServer.run { server in
            try await server.createShop()
            try await server.publish(.gate, #"{"minimumVersion":"1.0"}"#)
            let gate = UpdateGate(app: try server.app(version: "1.5"))
            var updates = gate.updates().makeAsyncIterator()
            #expect(try await updates.next()?.decision.action == UpdateDecision.Action.none)  // from the opening snapshot (version 1)
            try await server.publish(.gate, #"{"maintenance":{"active":true}}"#)
            let check = try #require(try await updates.next())
            #expect(check.decision.action == .maintenance && check.decision.policyVersion == 2 && check.source == .server)
            #expect(gate.current?.action == .maintenance)
        }
    }

    @Test func withoutAnyPolicyAnUnreachableServerLetsTheAppRun() async throws {
        let app = try KizunaApp(
            server: URL(string: "http://127.0.0.1:9")!, appId: "shop", directory: LiveServer.temporaryDirectory(),
            device: DeviceContext(appVersion: "1.0"))
        let check = try await UpdateGate(app: app).check()
        #expect(check.source == .noPolicy && check.decision.action == .none && !check.shouldPresent)
    }
}

/// Apps call `check()` from the first screen and from `didBecomeActive`, which fire together at launch.
@Suite("UpdateGate presents once per launch")
struct UpdateGatePresentationTests {
    @Test func concurrentChecksShareOneRequestAndOnlyOnePresents() async throws {
        // Counted by the server's request log, not by connection: two requests on one keep-alive connection count two.
        // The line is logged before the answer is written, so once the client has its answer, the request counts.
        let log = RecordingLogHandler.Records()
        let gateChecks = { log.messages(at: .info).filter { $0.hasPrefix("POST /v1/apps/shop/gate:check ") }.count }
        try await LiveServer.run(configure: {
            $0.logLevel = .info
            $0.logHandler = { _ in RecordingLogHandler(records: log) }
        }) { server in
            try await server.createShop()
            try await server.publish(.gate, #"{"minimumVersion":"2.0"}"#)
            let gate = UpdateGate(app: try server.app(version: "1.0"))

            async let firstScreen = gate.check()
            async let becameActive = gate.check()
            let answers = try await [firstScreen, becameActive]
            #expect(gateChecks() == 1, "one request for both calls")
            #expect(answers.allSatisfy { $0.decision.action == .require && $0.source == .server })
            #expect(answers.filter(\.shouldPresent).count == 1, "one alert, not two")

            // Still in front: the same decision is not presented again.
            #expect(try await gate.check().shouldPresent == false)
            #expect(gateChecks() == 2, "a later check is a request of its own")
            // Back from the background (UIKit's notification, or the call): presented again.
            NotificationCenter.default.post(name: Notification.Name("UIApplicationDidEnterBackgroundNotification"), object: nil)
            #expect(try await gate.check().shouldPresent == true)
            #expect(try await gate.check().shouldPresent == false)
            gate.appDidEnterBackground()
            #expect(try await gate.check().shouldPresent == true)

            // A different decision is presented at once; the same policy republished is not.
            try await server.publish(.gate, #"{"maintenance":{"active":true}}"#)
            let maintenance = try await gate.check()
            #expect(maintenance.decision.action == .maintenance && maintenance.shouldPresent)
            try await server.publish(.gate, #"{"maintenance":{"active":true}}"#)
            let again = try await gate.check()
            #expect(again.decision.policyVersion == 3 && !again.shouldPresent)
            // Cleared, then blocking again: a new prompt.
            try await server.publish(.gate, #"{}"#)
            #expect(try await gate.check().decision.action == .none)
            try await server.publish(.gate, #"{"maintenance":{"active":true}}"#)
            #expect(try await gate.check().shouldPresent == true)
        }
    }

    @Test func concurrentRecommendChecksPresentOnce() async throws {
        try await LiveServer.run { server in
            try await server.createShop()
            try await server.publish(.gate, #"{"recommendedVersion":"2.0"}"#)
            let gate = UpdateGate(app: try server.app(version: "1.0"))
            async let firstScreen = gate.check()
            async let becameActive = gate.check()
            let answers = try await [firstScreen, becameActive]
            #expect(answers.allSatisfy { $0.decision.action == .recommend })
            #expect(answers.filter(\.shouldPresent).count == 1)
        }
    }
}
