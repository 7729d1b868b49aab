import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import KizunaTestSupport
import Logging
import NIOCore
import Synchronization
import Testing

@testable import KizunaServer

/// PostgreSQL taken away from two running instances (through a proxy the test cuts, as when the database restarts)
/// while a writer creates records on one and a subscriber listens on the other, then given back: writes are refused
/// with a typed 503 meanwhile, new WebSocket connections with 1013, and once it is back the instances reconnect on
/// their own and the subscriber ends with every acknowledged record, once each, in seq order.
@Suite("GraphQL subscriptions through a PostgreSQL outage")
struct GraphQLWSOutageTests {
    typealias Gate = GraphQLWSResumeTests.Gate

    /// Records written before the outage, and in all.
    static let beforeOutage = 20
    static let total = 60
    /// Refused writes the writer sees before the test gives the store back.
    static let refusalsDuringOutage = 5
    /// The whole test's time. Its WebSocket sessions get as long: on a loaded machine the subscriber's one session can
    /// last minutes, and should one hang, the deadline's message names the step and what the servers logged.
    static let deadline = Duration.seconds(240)

    /// What the writer saw.
    struct Written: Sendable {
        /// The ids whose creation was acknowledged, in the order they were.
        var acknowledged: [String] = []
        /// The answers to writes that were not: status, `Retry-After`, and the error code.
        var refusals: [(status: Int, retryAfter: String?, code: String?)] = []
    }

    @Test(arguments: TestBackend.available.filter { $0 == .postgres })
    func instancesRideOutARestartAndTheSubscriberLosesNothing(_ backend: TestBackend) async throws {
        try await withDeadline(Self.deadline) { step in try await Self.rideOutARestart(backend, step: step) }
    }

    static func rideOutARestart(_ backend: TestBackend, step: TestStep) async throws {
        let (proxy, proxyURL) = try await TCPProxy.postgres()
        let configure: @Sendable (inout KizunaConfiguration) -> Void = { configuration in
            configuration.passwordParameters = .init(logN: 10, r: 8, p: 1)
            configuration.changePollInterval = .seconds(3600)  // LISTEN/NOTIFY and its reconnection alone
            configuration.logLevel = .debug  // what the servers did, in the message should the deadline pass
            configuration.logHandler = step.logHandler
            if case .postgres(_, let schema) = configuration.database { configuration.database = .postgres(url: proxyURL, schema: schema) }
        }
        try await withTestServers(backend, configure: configure) { a, b in
            #expect(try await a.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            #expect(try await DataSchemaPublishingTests.publish(a, DataMutationTests.schema).status == .ok)
            let alice = try await GraphQLEndpointTests.signUp(a, "alice@example.com")
            let live = Gate()
            let cutNow = Gate()
            let cutDone = Gate()
            let restoreNow = Gate()

            step.reached("subscribing and writing")
            async let subscriber = Self.listen(to: b, as: alice, live: live)
            async let writer = Self.write(to: a, as: alice, after: live, cutNow: cutNow, cutDone: cutDone, restoreNow: restoreNow)
            await cutNow.wait()
            step.reached("cutting the proxy")
            await proxy.cut()
            // A connection opened meanwhile cannot be let in: 1013, try again later (not 4500, which clients take as
            // final), with the reason's code.
            let refused = try await GraphQLWSTestClient.connect(b, limit: Self.deadline) { client in
                try await client.send(.connectionInit(payload: ["authorization": .string("Bearer \(alice.token)")]))
                while try await client.receive() != nil {}
            }
            #expect(refused.code == 1013 && refused.reason == "store_unavailable", "\(refused)")
            cutDone.fire()
            await restoreNow.wait()
            step.reached("restoring the proxy")
            try await proxy.restore()
            step.reached("waiting for the writer")
            let written = try await writer
            step.reached("waiting for the subscriber")
            let delivered = try await subscriber
            step.reached("shutting the servers down")

            // Every refused write was told so at once, typed, with when to retry: never a 500, never a hang.
            #expect(written.refusals.count >= Self.refusalsDuringOutage)
            for refusal in written.refusals {
                #expect(refusal.status == 503 && refusal.retryAfter == "5" && refusal.code == "store_unavailable", "\(refusal)")
            }
            // Nothing acknowledged is lost, nothing arrives twice, and the seqs only grow.
            #expect(written.acknowledged == (0..<Self.total).map { "n\($0)" } + ["end"])
            #expect(delivered.map(\.id) == written.acknowledged)
            #expect(GraphQLWSSubscriptionTests.isIncreasing(delivered.map(\.seq)))
        }
        step.reached("cutting the proxy at the end")
        await proxy.cut()
    }

    /// Creates `n0`…, then `end`, retrying each refused one with its own id (a retried create answers as the first
    /// did). Before the outage's first write it asks for the cut; after enough refusals, for the store back.
    static func write(
        to server: TestServer, as user: GraphQLWSEndpointTests.User, after live: Gate, cutNow: Gate, cutDone: Gate, restoreNow: Gate
    ) async throws -> Written {
        await live.wait()
        var written = Written()
        for id in (0..<total).map({ "n\($0)" }) + ["end"] {
            if id == "n\(beforeOutage)" {
                cutNow.fire()
                await cutDone.wait()
            }
            while true {
                let response = try await server.send(
                    .post, "/v1/apps/shop/graphql",
                    json: #"{"query":"mutation { createNote(input: { id: \"\#(id)\", text: \"note \#(id)\" }) { id } }"}"#,
                    headers: [.authorization: "Bearer \(user.token)"], authorized: false)
                let body = try JSONDecoder().decode(JSONValue.self, from: Data(response.body.readableBytesView))
                if response.status == .ok, body["data"]?["createNote"]?["id"] == .string(id) {
                    written.acknowledged.append(id)
                    break
                }
                let code = body["errors"]?.arrayValue?.first?["extensions"]?["code"]?.stringValue
                written.refusals.append((Int(response.status.code), response.headers[.retryAfter], code))
                if written.refusals.count == refusalsDuringOutage { restoreNow.fire() }
                // While the pool replaces its dead connections, a write may be refused once more: tried again.
                try #require(written.refusals.count < 5000, "the instance did not recover: \(written.refusals.suffix(3))")
            }
        }
        return written
    }

    /// Subscribes on `server` until the `end` note arrives, reconnecting with `since` whenever its connection closes.
    static func listen(to server: TestServer, as user: GraphQLWSEndpointTests.User, live: Gate) async throws -> [GraphQLWSResumeTests.Delivery] {
        let received = GraphQLWSResumeTests.Collected()
        for _ in 0..<5 {
            let since = received.deliveries.withLock { $0.last.map { String($0.seq) } }
            var variables: [String: JSONValue] = [:]
            if let since { variables["since"] = .string(since) }
            let subscribe = GraphQLWSEndpointTests.subscribe("notes", GraphQLWSSubscriptionTests.onCreateNote, variables: variables)
            _ = try await GraphQLWSTestClient.connect(server, limit: deadline) { client in
                try await client.initialize(token: user.token)
                try await client.send(subscribe)
                // A resumed subscription replays what it missed at once, so deliveries can come before the pong: they
                // count as much as those after it (dropped, an `end` among them left the subscriber waiting for ever).
                let early = try await client.untilPong()
                live.fire()
                func take(_ message: GraphQLWSMessage) -> Bool {
                    guard let delivery = GraphQLWSSubscriptionTests.deliveries([message]).first else { return false }
                    received.deliveries.withLock { $0.append(delivery) }
                    return delivery.id == "end"
                }
                for message in early {
                    if take(message) { return }
                }
                while let message = try await client.receive() {
                    if case .ping = message { try await client.send(.pong(payload: nil)) }
                    if take(message) { return }
                }
            }
            if received.deliveries.withLock({ $0.last?.id == "end" }) { break }
        }
        return received.deliveries.withLock { $0 }
    }
}
