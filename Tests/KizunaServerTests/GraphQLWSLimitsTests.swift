import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import KizunaTestSupport
import SQLKit
import Synchronization
import Testing

@testable import KizunaServer

/// What keeps a data API WebSocket within bounds, over real loopback sockets: the per-connection message rate and
/// size, the keep-alive that holds an idle connection open for as long as it answers, and the session behind it, whose
/// end (signed out, disabled, expired) closes the connection with 4403.
@Suite("GraphQL over WebSocket: limits, keep-alive and sessions")
struct GraphQLWSLimitsTests {
    @Test func theRateLimitTakesABurstThenTheRate() {
        var limit = MessageRateLimit(rate: 10)
        let start = ContinuousClock.now
        // Each answer in order: (when, admitted?).
        let steps: [(Duration, Bool, String)] =
            Array(repeating: (.zero, true, "the burst"), count: 20) + [
                (.zero, false, "the 21st at once"),
                (.milliseconds(100), true, "a tenth of a second brings one more"),
                (.milliseconds(100), false, "but only one"),
            ] + Array(repeating: (.seconds(60), true, "a long pause refills the burst"), count: 20) + [
                (.seconds(60), false, "and no more than the burst")
            ]
        for (index, (offset, admitted, what)) in steps.enumerated() {
            let answer = limit.admit(at: start + offset)
            #expect(answer == admitted, "step \(index): \(what)")
        }
    }

    @Test func aClientSendingTooManyMessagesIsClosedWith4430() async throws {
        try await GraphQLWSEndpointTests.start(.sqlite, configure: { $0.graphQLWS.maxMessagesPerSecond = 5 }) { server, alice, _ in
            let closed = try await GraphQLWSEndpointTests.closing(server, token: alice.token) { client in
                // connection_init took one; the burst is ten.
                for _ in 0..<40 {
                    do {
                        try await client.send(.ping(payload: nil))
                    } catch {
                        break  // the server closed meanwhile
                    }
                }
            }
            #expect(closed.code == 4430 && closed.reason == "Too many messages: at most 5 per second", "\(closed)")
        }
    }

    @Test func aMessageOverTheSizeLimitIsClosedWith1009WholeOrInFragments() async throws {
        try await GraphQLWSEndpointTests.start(.sqlite, configure: { $0.graphQLWS.maxMessageBytes = 2048 }) { server, alice, _ in
            let padding = String(repeating: "x", count: 1500)
            // Within the limit, a message split into frames is read whole.
            let fragmented = try await GraphQLWSTestClient.connect(server) { client in
                try await client.initialize(token: alice.token)
                try await client.send(fragments: [#"{"type":"ping","#, #""payload":{"pad":""#, padding, #""}}"#])
                let pong = try await client.receive()
                #expect(pong == .pong(payload: ["pad": .string(padding)]))
            }
            #expect(fragmented.code == 1000)
            let whole = try await GraphQLWSEndpointTests.closing(server, token: alice.token) { client in
                try await client.send(text: #"{"type":"ping","payload":{"pad":"\#(padding)\#(padding)"}}"#)
            }
            #expect(whole.code == 1009, "one frame over the limit: \(whole)")
            let pieces = try await GraphQLWSEndpointTests.closing(server, token: alice.token) { client in
                try await client.send(fragments: [#"{"type":"ping","payload":{"pad":""#, padding, padding, #""}}"#])
            }
            #expect(pieces.code == 1009 && pieces.reason == "Message too big: at most 2048 bytes", "\(pieces)")
        }
    }

    @Test func anIdleConnectionThatAnswersPingsStaysOpenAcrossManyIntervals() async throws {
        try await GraphQLWSEndpointTests.start(.sqlite, configure: { $0.graphQLWS.keepAliveInterval = .seconds(2) }) { server, alice, _ in
            let closed = try await GraphQLWSTestClient.connect(server) { client in
                try await client.initialize(token: alice.token)
                try await client.send(GraphQLWSEndpointTests.subscribe("notes", GraphQLWSSubscriptionTests.onCreateNote))
                var pings = 0
                while pings < 6 {
                    let message = try await client.receive()
                    guard case .ping? = message else {
                        Issue.record("expected a ping, got \(String(describing: message))")
                        return
                    }
                    pings += 1
                    try await client.send(.pong(payload: nil))
                }
                // Still open, and still delivering.
                try await GraphQLWSSubscriptionTests.create(server, "late", as: alice)
                while true {
                    let message = try await client.receive()
                    if case .ping? = message {
                        try await client.send(.pong(payload: nil))
                        continue
                    }
                    #expect(message?.id == "notes", "\(String(describing: message))")
                    guard case .next(_, let payload)? = message else { return }
                    #expect(payload["data"]?["onCreateNote"]?["id"] == "late")
                    return
                }
            }
            #expect(closed.code == 1000, "\(closed)")
            // One that stops answering is closed once the next ping is due.
            let silent = try await GraphQLWSTestClient.connect(server) { client in
                try await client.initialize(token: alice.token)
                while try await client.receive() != nil {}
            }
            #expect(silent.code == 4411, "\(silent)")
        }
    }

    @Test func aSubscriberThatStopsReadingIsClosedWith4410AndNobodyElseWaits() async throws {
        let configure: @Sendable (inout KizunaConfiguration) -> Void = { configuration in
            configuration.graphQLWS.maxPendingChanges = 4
            configuration.graphQLWS.closeTimeout = .seconds(120)  // the close frame waits behind what the socket holds
        }
        try await GraphQLWSEndpointTests.start(.sqlite, configure: configure) { server, alice, _ in
            // Enough bytes to fill both ends' socket buffers many times over: 400 notes of 32 KiB.
            let count = 400
            let text = String(repeating: "x", count: 32 * 1024)
            let slowIsLive = GraphQLWSResumeTests.Gate()
            let fastIsDone = GraphQLWSResumeTests.Gate()
            let slowReceived = GraphQLWSResumeTests.Collected()
            let subscribe = GraphQLWSEndpointTests.subscribe("notes", GraphQLWSSubscriptionTests.onCreateNote)
            async let slow = GraphQLWSTestClient.connect(server, limit: .seconds(180)) { client in
                try await client.initialize(token: alice.token)
                try await client.send(subscribe)
                _ = try await client.untilPong()
                slowIsLive.fire()
                await fastIsDone.wait()  // reads nothing meanwhile
                while let message = try await client.receive() {
                    guard let delivery = GraphQLWSSubscriptionTests.deliveries([message]).first else { continue }
                    slowReceived.deliveries.withLock { $0.append(delivery) }
                }
            }
            let fast = try await GraphQLWSTestClient.connect(server, limit: .seconds(180)) { client in
                try await client.initialize(token: alice.token)
                try await client.send(subscribe)
                _ = try await client.untilPong()
                await slowIsLive.wait()
                async let written: Void = {
                    for index in 0..<count {
                        let answer = try await DataMutationTests.graphQL(
                            server, "mutation($input: CreateNoteInput!) { createNote(input: $input) { id } }",
                            ["input": ["id": .string("n\(index)"), "text": .string(text)]], token: alice.token)
                        try #require(answer["data"]?["createNote"]?["id"] == .string("n\(index)"), "\(answer)")
                    }
                }()
                let received = GraphQLWSSubscriptionTests.deliveries(try await client.messages(for: "notes", count: count))
                try await written
                #expect(received.map(\.id) == (0..<count).map { "n\($0)" }, "the fast subscriber gets every note, in order")
                fastIsDone.fire()
            }
            #expect(fast.code == 1000)
            let slowClosed = try await slow
            #expect(slowClosed.code == 4410 && slowClosed.reason == "Fell behind: resume from your last seq", "\(slowClosed)")
            // What it did get is the start of the stream, with no gap: resuming from its last seq loses nothing.
            let got = slowReceived.deliveries.withLock { $0 }.map(\.id)
            #expect(got.count < count && got == (0..<got.count).map { "n\($0)" }, "\(got.count) received")
        }
    }

    @Test func aServerFailureWhileLettingAConnectionInClosesWith4500() async throws {
        try await GraphQLWSEndpointTests.start(.sqlite) { server, alice, _ in
            // A store that answers, but not as the server expects (a table gone): a fault of the server's, not the
            // client's, and not a passing outage.
            try await server.database.raw("ALTER TABLE sessions RENAME TO sessions_gone").run()
            let closed = try await GraphQLWSTestClient.connect(server) { client in
                try await client.send(.connectionInit(payload: ["authorization": .string("Bearer \(alice.token)")]))
                while try await client.receive() != nil {}
            }
            #expect(closed.code == 4500 && closed.reason == "Internal server error", "\(closed)")
        }
    }

    /// A connection of `user` with a live `onCreateNote` subscription, until it closes.
    static func subscribed(
        _ server: TestServer, _ user: GraphQLWSEndpointTests.User, then act: @escaping @Sendable () async throws -> Void
    ) async throws -> GraphQLWSTestClient.Closed {
        try await GraphQLWSTestClient.connect(server) { client in
            try await client.initialize(token: user.token)
            try await client.send(GraphQLWSEndpointTests.subscribe("notes", GraphQLWSSubscriptionTests.onCreateNote))
            let opened = try await client.untilPong()
            #expect(opened.isEmpty, "\(opened)")
            try await act()
            while try await client.receive() != nil {}
        }
    }

    @Test(arguments: TestBackend.available)
    func aSessionSignedOutOrDisabledWhileConnectedIsClosedWith4403(_ backend: TestBackend) async throws {
        try await GraphQLWSEndpointTests.start(backend) { server, alice, bob in
            let signedOut = try await Self.subscribed(server, alice) {
                var headers = HTTPFields()
                headers[.authorization] = "Bearer \(alice.token)"
                let answer = try await server.send(.post, "/v1/auth/sign-out", headers: headers, authorized: false)
                #expect(answer.status.code < 300, "\(answer.status)")
            }
            #expect(signedOut.code == 4403 && signedOut.reason == "session_expired", "\(signedOut)")
            let disabled = try await Self.subscribed(server, bob) {
                let answer = try await server.send(.patch, "/v1/admin/users/\(bob.id)", json: #"{"disabled":true}"#)
                #expect(answer.status == .ok)
            }
            #expect(disabled.code == 4403, "\(disabled)")
        }
    }

    @Test func aSessionThatEndsWhileConnectedIsClosedWith4403() async throws {
        try await GraphQLWSEndpointTests.start(.sqlite) { server, alice, _ in
            // Alice's access token expires in 3 s and her session in 6 s (set in the store, so that a slow sign-up
            // does not eat into them): at the first the session still lives and the connection stays; then it ends.
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            try await server.database.raw(
                "UPDATE sessions SET expires_at = \(bind: now + 3000), refresh_expires_at = \(bind: now + 6000) WHERE user_id = \(bind: alice.id)"
            ).run()
            let closed = try await Self.subscribed(server, alice) {}
            #expect(closed.code == 4403 && closed.reason == "session_expired", "\(closed)")
        }
    }

    /// A server shutting down closes its WebSockets with 1000 (hummingbird-websocket's close); a peer that never
    /// answers the close frame, and never reads, is dropped after the shutdown grace instead of holding the shutdown.
    @Test func aPeerThatNeverAnswersTheCloseFrameCannotHoldTheShutdown() async throws {
        try await withDeadline(.seconds(60)) { step in
            let configure: @Sendable (inout KizunaConfiguration) -> Void = {
                $0.shutdownGrace = .milliseconds(300)
                $0.graphQLWS.keepAliveInterval = .seconds(3600)  // only the grace may end the connection
            }
            // Held past the server's shutdown: a connection let go of is closed, which would answer for it.
            let held = Mutex<RawConnection?>(nil)
            try await GraphQLWSEndpointTests.start(.sqlite, configure: configure) { server, alice, _ in
                let port = try #require(server.client.port)
                let silent = try await GraphQLWSEndpointTests.upgrading(port, path: "/v1/apps/shop/graphql", subprotocols: "graphql-transport-ws")
                held.withLock { $0 = silent }
                step.reached("upgrading")
                // connection_init as a masked text frame (a zero mask leaves the bytes as they are), then silence.
                let initialize = Array(try GraphQLWSMessage.connectionInit(payload: ["authorization": .string("Bearer \(alice.token)")]).text().utf8)
                try #require(initialize.count < 126)
                try await silent.send(bytes: [0x81, 0x80 | UInt8(initialize.count), 0, 0, 0, 0] + initialize)
                let answered = try await silent.readBytes { String(decoding: $0, as: UTF8.self).contains("connection_ack") }
                #expect(String(decoding: answered, as: UTF8.self).hasPrefix("HTTP/1.1 101"))
                step.reached("shutting the server down with a peer that will not answer")
            }
            step.reached("shut down")
            await held.withLock { $0 }?.close()
        }
    }
}
