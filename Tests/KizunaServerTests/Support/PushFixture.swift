import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import KizunaTestSupport
import Synchronization
import Testing

@testable import KizunaServer

/// A signing key, the local APNs that trusts it, a clock both sides read, and helpers to register devices, send
/// pushes and wait for them.
struct PushFixture: Sendable {
    static let keyId = "KEY123ABCD"
    static let teamId = "TEAM12345A"
    static let topic = "com.example.shop"

    /// The time (epoch milliseconds) moved forward by the test: never behind the store's own clock.
    final class Clock: Sendable {
        private let offset = Mutex<Int64>(0)
        var now: Int64 { EpochMillis.now + offset.withLock { $0 } }
        func advance(minutes: Int64) { offset.withLock { $0 += minutes * 60_000 } }
    }

    let key: P256.Signing.PrivateKey
    let apns: APNsTestServer
    let clock: Clock

    static func start(keepReceived: Bool = true) async throws -> PushFixture {
        let key = P256.Signing.PrivateKey()
        let clock = Clock()
        let apns = try await APNsTestServer.start(
            expecting: .init(publicKey: key.publicKey, keyId: keyId, teamId: teamId, topic: topic), now: { clock.now / 1000 },
            keepReceived: keepReceived)
        return PushFixture(key: key, apns: apns, clock: clock)
    }

    /// Points a server's sender at the local APNs, on the fixture's clock, with a secret key of its own.
    func configure(_ configuration: inout KizunaConfiguration) {
        configuration.push.productionURL = apns.url
        configuration.push.sandboxURL = apns.url
        configuration.push.trustRootsPEM = apns.certificateAuthorityPEM
        configuration.push.now = { [clock] in clock.now }
        configuration.push.pollInterval = .seconds(3600)  // woken by new jobs and by the tests
        if case .postgres = configuration.database { configuration.secretKey = .text(String(repeating: "ab", count: 32)) }
    }

    /// The credentials upload for the fixture's key.
    var credentials: String {
        let p8 = key.pemRepresentation.replacingOccurrences(of: "\n", with: "\\n")
        return #"{"p8":"\#(p8)","keyId":"\#(Self.keyId)","teamId":"\#(Self.teamId)"}"#
    }

    /// Creates the shop app and sets its credentials.
    func prepare(_ server: TestServer) async throws {
        #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
        let set = try await server.send(.put, "/v1/admin/apps/shop/push/credentials", json: credentials)
        #expect(set.status == .ok, "\(set.text)")
    }

    /// A token for install `n`: 32 bytes of hex.
    static func token(_ n: Int) -> String { String(format: "%064x", n + 0x1000) }

    /// Registers install `i<n>` with token `token(n)`.
    @discardableResult
    static func register(
        _ server: TestServer, _ n: Int, extra: String = "", environment: String = "production", session: String? = nil
    ) async throws -> PushDevice {
        var headers: HTTPFields = [:]
        if let session { headers[.authorization] = "Bearer \(session)" }
        let response = try await server.send(
            .post, "/v1/apps/shop/push/devices",
            json: #"{"installId":"i\#(n)","token":"\#(token(n))","environment":"\#(environment)"\#(extra)}"#, headers: headers, authorized: false)
        try #require(response.status == .ok, "\(response.text)")
        return try response.decode(PushDevice.self)
    }

    /// Creates a push job; answers it.
    static func send(_ server: TestServer, _ json: String) async throws -> PushJobStatus {
        let response = try await server.send(.post, "/v1/admin/apps/shop/push/jobs", json: json)
        try #require(response.status == .created, "\(response.text)")
        return try response.decode(PushJobStatus.self)
    }

    static func status(_ server: TestServer, _ id: String) async throws -> PushJobStatus {
        try await server.send(.get, "/v1/admin/push/jobs/\(id)").decode(PushJobStatus.self)
    }

    static func deliveries(_ server: TestServer, _ id: String) async throws -> [String: PushDeliveryStatus] {
        let list = try await server.send(.get, "/v1/admin/push/jobs/\(id)/deliveries?limit=1000").decode(PushDeliveryList.self)
        return Dictionary(uniqueKeysWithValues: list.deliveries.map { ($0.installId, $0) })
    }

    /// Waits until job `id` is done, waking `senders` after each batch they record; with `advancing`, moves the clock
    /// that far first each time (so retries come due). After ten rounds without an end it moves the clock a minute a
    /// round anyway: a send that failed for a moment (a busy machine) is retried a second or more later.
    func finish(_ id: String, on server: TestServer, senders: [PushSender], advancing minutes: Int64 = 0) async throws -> PushJobStatus {
        for round in 0..<60 {
            let status = try await Self.status(server, id)
            if status.state == .done || status.state == .cancelled { return status }
            // Watched before the poke: the pass it causes ends by telling them.
            let passes = senders.map { $0.passes() }
            if minutes > 0 || round >= 10 { clock.advance(minutes: max(minutes, 1)) }
            for sender in senders { sender.poke() }
            // A pass of each: an idle one answers at once, the busy one once it has sent what it claimed — within a
            // minute (APNs' answers time out after 30 s), or the test fails here instead of waiting forever.
            let passed = await finishes(within: .seconds(60)) {
                await withTaskGroup(of: Void.self) { each in
                    for stream in passes { each.addTask { for await _ in stream { return } } }
                    await each.waitForAll()
                }
            }
            if !passed {
                Issue.record("A push sender did not end a pass within a minute (round \(round) of job \(id))")
                return try await Self.status(server, id)
            }
        }
        let pending = try await Self.deliveries(server, id).values.filter { $0.state == .pending }
        Issue.record("Push job \(id) did not finish: \(pending.prefix(5))")
        return try await Self.status(server, id)
    }
}
