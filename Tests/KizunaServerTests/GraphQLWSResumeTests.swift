import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import Synchronization
import Testing

@testable import KizunaServer

/// Subscriptions that outlive a connection or an instance, over real loopback sockets: a subscriber that drops
/// mid-stream while its records keep being written resumes with `since` and ends with every record exactly once, in seq
/// order; and a subscriber on one PostgreSQL instance hears the records written through another, with their seq, by
/// LISTEN/NOTIFY alone, and never another user's.
@Suite("GraphQL subscriptions resumed and across instances")
struct GraphQLWSResumeTests {
    typealias Delivery = (id: String, seq: Int64)
    /// What a subscriber received over all its connections, and how each closed.
    typealias Outcome = (delivered: [Delivery], closes: [UInt16?])

    /// How many notes the writer creates, one after another.
    static let total = 300
    /// How many deliveries the subscriber reads before it disconnects.
    static let firstSession = 50
    /// The note the writer waits before until the subscriber has disconnected, so that later ones are written while it
    /// is away or resuming.
    static let writtenAway = 150
    /// The note the writer waits before until the resumed subscription is live, so that later ones reach it live.
    static let writtenLive = 250

    /// A one-time event: one task waits for it, another fires it (at most once matters; firing again does nothing).
    struct Gate: Sendable {
        private let stream: AsyncStream<Never>
        private let continuation: AsyncStream<Never>.Continuation

        init() {
            (stream, continuation) = AsyncStream.makeStream(of: Never.self)
        }

        func fire() {
            continuation.finish()
        }

        /// Returns once fired, or once the waiting task is cancelled.
        func wait() async {
            for await _ in stream {}
        }
    }

    /// What a session's connection read, for the test once the connection is over.
    final class Collected: Sendable {
        let deliveries = Mutex<[Delivery]>([])
    }

    /// The notes' creations in the `changes` log, oldest first: each record's id and seq.
    static func logged(_ server: TestServer) async throws -> [Delivery] {
        try await DataMutationTests.changes(server).compactMap { change -> Delivery? in
            let payload = try JSONDecoder().decode(JSONValue.self, from: Data((change.payload ?? "null").utf8))
            guard payload["model"] == "Note", let id = payload["id"]?.stringValue else { return nil }
            return (id, change.seq)
        }
    }

    /// Adds the deliveries of subscription `notes` among `messages` to `deliveries`; anything else for it (an `error`,
    /// a `complete`) is an issue, and answers false. Messages for no operation (the server's keep-alive `ping`) are
    /// skipped.
    static func add(_ messages: [GraphQLWSMessage], to deliveries: inout [Delivery]) -> Bool {
        for message in messages where message.id == "notes" {
            guard let delivery = GraphQLWSSubscriptionTests.deliveries([message]).first else {
                Issue.record("expected a delivery, got \(message)")
                return false
            }
            deliveries.append(delivery)
        }
        return true
    }

    /// One connection of a subscriber to `server`: subscribes to its new notes (after `since`, when given), fires
    /// `live` once the subscription is live (its `ping` answered), and reads until `enough` says it has enough, then up
    /// to one more `pong` so that a delivery sent twice would show; it answers the server's keep-alive pings meanwhile.
    /// Answers what it read and how the connection closed: normally (1000), or by the server with 4410 when it fell
    /// behind, which a client resumes from too.
    static func session(
        _ server: TestServer, token: String, since: Int64?, live: Gate, until enough: @escaping @Sendable ([Delivery]) -> Bool
    ) async throws -> (deliveries: [Delivery], closed: GraphQLWSTestClient.Closed) {
        let collected = Collected()
        let closed = try await GraphQLWSTestClient.connect(server, limit: .seconds(120)) { client in
            try await client.initialize(token: token)
            let variables: [String: JSONValue]? = since.map { ["since": .string("\($0)")] }
            try await client.send(GraphQLWSEndpointTests.subscribe("notes", GraphQLWSSubscriptionTests.onCreateNote, variables: variables))
            var deliveries: [Delivery] = []
            defer { collected.deliveries.withLock { $0 = deliveries } }
            let opened = try await client.untilPong()
            guard Self.add(opened, to: &deliveries) else { return }
            live.fire()
            while !enough(deliveries), let message = try await client.receive() {
                // Answered as any client must: a session outlasting two keep-alive intervals under load is closed with
                // 4411 otherwise.
                if case .ping = message { try await client.send(.pong(payload: nil)) }
                guard Self.add([message], to: &deliveries) else { return }
            }
            guard enough(deliveries) else { return }  // the server closed the connection
            let rest = try await client.untilPong()
            _ = Self.add(rest, to: &deliveries)
        }
        return (collected.deliveries.withLock { $0 }, closed)
    }

    /// What the writer waits for: the first subscription live, the subscriber gone, and its resumed subscription live.
    typealias Gates = (started: Gate, away: Gate, resumed: Gate)

    /// Creates `ids` as `user`'s notes one after another over HTTP once `started`, waiting before ``writtenAway`` until
    /// `away` and before ``writtenLive`` until `resumed` (a subscriber quicker than the writer never makes it wait).
    static func write(_ ids: [String], on server: TestServer, as user: GraphQLWSEndpointTests.User, _ gates: Gates) async throws {
        await gates.started.wait()
        for (index, id) in ids.enumerated() {
            if index == writtenAway { await gates.away.wait() }
            if index == writtenLive { await gates.resumed.wait() }
            try Task.checkCancellation()
            try await GraphQLWSSubscriptionTests.create(server, id, as: user)
        }
    }

    @Test(arguments: TestBackend.available)
    func aSubscriberResumingMidStreamGetsEveryRecordOnceInOrder(_ backend: TestBackend) async throws {
        try await GraphQLWSEndpointTests.start(backend) { server, alice, _ in
            let ids = (0..<Self.total).map { "n\($0)" }
            let last = try #require(ids.last)
            let gates: Gates = (Gate(), Gate(), Gate())
            let outcome = try await withThrowingTaskGroup(of: Void.self, returning: Outcome.self) { group in
                group.addTask { try await Self.write(ids, on: server, as: alice, gates) }
                // Live before the first note, the subscriber reads a few and drops the connection; the writer goes on.
                let first = try await Self.session(server, token: alice.token, since: nil, live: gates.started) {
                    $0.count >= Self.firstSession
                }
                gates.away.fire()
                var delivered = first.deliveries
                var closes = [first.closed.code]
                // It resumes after the last seq it received until it has the last note (again if the server cut it off
                // with 4410, which a slow reader may be under load; at most a few times).
                while delivered.last?.id != last, closes.count < 5 {
                    let since = try #require(delivered.last?.seq, "nothing was delivered before the disconnect")
                    let next = try await Self.session(server, token: alice.token, since: since, live: gates.resumed) { $0.last?.id == last }
                    delivered += next.deliveries
                    closes.append(next.closed.code)
                }
                try await group.waitForAll()  // the writer is done
                return (delivered, closes)
            }
            let (delivered, closes) = (outcome.delivered, outcome.closes)
            #expect(closes.allSatisfy { $0 == 1000 || $0 == 4410 }, "\(closes)")
            #expect(closes.count >= 2, "the subscriber disconnected and resumed")
            #expect(delivered.map(\.id) == ids, "every note exactly once, in the order written: \(delivered.map(\.id))")
            #expect(GraphQLWSSubscriptionTests.isIncreasing(delivered.map(\.seq)), "in increasing seq order")
            // Each with the seq the log gave its creation: the last seq received is what a resume starts after.
            let logged = try await Self.logged(server)
            #expect(logged.map(\.id) == ids)
            #expect(delivered.map(\.seq) == logged.map(\.seq))
        }
    }

    @Test(arguments: TestBackend.available.filter { $0 == .postgres })
    func aSubscriberOnOneInstanceHearsRecordsWrittenThroughAnother(_ backend: TestBackend) async throws {
        let configure: @Sendable (inout KizunaConfiguration) -> Void = { configuration in
            configuration.passwordParameters = .init(logN: 10, r: 8, p: 1)
            // No polling: a change written through A reaches B's feed through LISTEN/NOTIFY, not the fallback read.
            configuration.changePollInterval = .seconds(3600)
        }
        try await withTestServers(backend, configure: configure) { a, b in
            #expect(try await a.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            #expect(try await DataSchemaPublishingTests.publish(a, DataMutationTests.schema).status == .ok)
            let alice = try await GraphQLEndpointTests.signUp(a, "alice@example.com")
            let bob = try await GraphQLEndpointTests.signUp(a, "bob@example.com")
            let closed = try await GraphQLWSTestClient.connect(b) { client in
                try await client.initialize(token: alice.token)  // a session signed up on A, checked on B
                try await client.send(GraphQLWSEndpointTests.subscribe("notes", GraphQLWSSubscriptionTests.onCreateNote))
                let opened = try await client.untilPong()  // live on B
                #expect(opened.isEmpty, "\(opened)")
                for index in 0..<3 {
                    for other in 0..<2 { try await GraphQLWSSubscriptionTests.create(a, "b\(index)\(other)", as: bob) }
                    try await GraphQLWSSubscriptionTests.create(a, "a\(index)", as: alice)
                }
                let received = try await client.messages(for: "notes", count: 3)
                let delivered = GraphQLWSSubscriptionTests.deliveries(received)
                // Bob's notes all came before alice's last one: had any been sent, it would have been read above.
                #expect(delivered.map(\.id) == ["a0", "a1", "a2"], "\(received)")
                let logged = try await Self.logged(a)
                #expect(logged.count == 9)
                #expect(delivered.map(\.seq) == logged.filter { $0.id.hasPrefix("a") }.map(\.seq), "each with its seq: \(logged)")
                guard case .next(_, let first)? = received.first else { return }
                #expect(first["data"]?["onCreateNote"] == ["id": "a0", "text": "note a0", "owner": .string(alice.id)])
                let rest = try await client.untilPong()
                #expect(rest.isEmpty, "\(rest)")
            }
            #expect(closed.code == 1000)
        }
    }
}
