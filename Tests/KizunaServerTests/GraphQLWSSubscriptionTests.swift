import Foundation
import KizunaCore
import SQLKit
import Synchronization
import Testing

@testable import KizunaServer

/// Subscriptions over the data API's WebSocket: changes made through the HTTP endpoint reach the subscribers the rules
/// let read them, in order and with their `extensions.seq`; `since` replays what a client missed before it goes live;
/// `complete` stops deliveries.
@Suite("GraphQL subscriptions over WebSocket")
struct GraphQLWSSubscriptionTests {
    static let onCreateNote = "subscription($since: String) { onCreateNote(since: $since) { id text owner } }"

    static func create(_ server: TestServer, _ id: String, as user: GraphQLWSEndpointTests.User) async throws {
        let answer = try await DataMutationTests.graphQL(
            server, "mutation($input: CreateNoteInput!) { createNote(input: $input) { id } }",
            ["input": ["id": .string(id), "text": .string("note \(id)")]],
            token: user.token)
        #expect(answer["data"]?["createNote"]?["id"] == .string(id), "\(answer)")
    }

    /// The record ids and seqs of `next` messages, in order.
    static func deliveries(_ messages: [GraphQLWSMessage]) -> [(id: String, seq: Int64)] {
        messages.compactMap { message in
            guard case .next(_, let payload) = message, let id = payload["data"]?["onCreateNote"]?["id"]?.stringValue,
                let seq = payload["extensions"]?["seq"]?.stringValue.flatMap({ Int64($0) })
            else { return nil }
            return (id, seq)
        }
    }

    static func isIncreasing(_ seqs: [Int64]) -> Bool {
        zip(seqs, seqs.dropFirst()).allSatisfy { $0 < $1 }
    }

    @Test(arguments: TestBackend.available)
    func subscribersHearTheirOwnNewRecordsOnly(_ backend: TestBackend) async throws {
        try await GraphQLWSEndpointTests.start(backend) { server, alice, bob in
            let closed = try await GraphQLWSTestClient.connect(server) { client in
                try await client.initialize(token: alice.token)
                try await client.send(GraphQLWSEndpointTests.subscribe("notes", Self.onCreateNote))
                let opened = try await client.untilPong()  // the subscription is live once the ping after it is answered
                #expect(opened.isEmpty, "\(opened)")
                for index in 0..<3 {
                    try await Self.create(server, "b\(index)", as: bob)
                    try await Self.create(server, "a\(index)", as: alice)
                }
                let received = try await client.messages(for: "notes", count: 3)
                let delivered = Self.deliveries(received)
                #expect(delivered.map(\.id) == ["a0", "a1", "a2"], "\(received)")
                #expect(Self.isIncreasing(delivered.map(\.seq)))
                guard case .next(_, let first)? = received.first else { return }
                #expect(first["data"]?["onCreateNote"] == ["id": "a0", "text": "note a0", "owner": .string(alice.id)])
                // Bob's notes came before alice's last one: had any been sent, it would have been read above.
                let rest = try await client.untilPong()
                #expect(rest.isEmpty, "\(rest)")
            }
            #expect(closed.code == 1000)
        }
    }

    @Test(arguments: TestBackend.available)
    func sinceReplaysWhatWasMissedThenGoesLive(_ backend: TestBackend) async throws {
        try await GraphQLWSEndpointTests.start(backend) { server, alice, bob in
            for id in ["a1", "a2", "a3"] { try await Self.create(server, id, as: alice) }
            try await Self.create(server, "b1", as: bob)
            let logged = try await DataMutationTests.changes(server)
            #expect(logged.count == 4)
            let afterFirst = try #require(logged.first?.seq)
            let closed = try await GraphQLWSTestClient.connect(server) { client in
                try await client.initialize(token: alice.token)
                try await client.send(GraphQLWSEndpointTests.subscribe("resume", Self.onCreateNote, variables: ["since": .string("\(afterFirst)")]))
                let replayed = try await client.messages(for: "resume", count: 2)
                #expect(Self.deliveries(replayed).map(\.id) == ["a2", "a3"], "\(replayed)")
                try await Self.create(server, "b2", as: bob)
                try await Self.create(server, "a4", as: alice)
                let live = try await client.messages(for: "resume", count: 1)
                let all = Self.deliveries(replayed + live)
                #expect(all.map(\.id) == ["a2", "a3", "a4"], "\(live)")
                #expect(Self.isIncreasing(all.map(\.seq)), "in order, none twice")
                let rest = try await client.untilPong()
                #expect(rest.isEmpty, "\(rest)")

                // A client that has seen everything resumes with nothing to replay.
                let last = try #require(all.last?.seq)
                try await client.send(GraphQLWSEndpointTests.subscribe("current", Self.onCreateNote, variables: ["since": .string("\(last)")]))
                let nothing = try await client.untilPong()
                #expect(nothing.isEmpty, "\(nothing)")
            }
            #expect(closed.code == 1000)
        }
    }

    @Test func sinceOlderThanTheLogIsRefusedWithSyncExpired() async throws {
        try await GraphQLWSEndpointTests.start(.sqlite) { server, alice, _ in
            for id in ["a1", "a2", "a3"] { try await Self.create(server, id, as: alice) }
            let logged = try await DataMutationTests.changes(server)
            let first = try #require(logged.first?.seq)
            let second = logged[1].seq
            let closed = try await GraphQLWSTestClient.connect(server) { client in
                try await client.initialize(token: alice.token)
                // A live subscription hears a4, so the connection has dispatched past a1 when "old" starts.
                try await client.send(GraphQLWSEndpointTests.subscribe("live", Self.onCreateNote))
                _ = try await client.untilPong()
                try await Self.create(server, "a4", as: alice)
                _ = try await client.messages(for: "live", count: 1)
                // Retention pruned the log up to a2: resuming after a1 would miss a2.
                try await server.database.raw("DELETE FROM changes WHERE seq <= \(bind: second)").run()
                try await client.send(GraphQLWSEndpointTests.subscribe("old", Self.onCreateNote, variables: ["since": .string("\(first)")]))
                let answer = try await client.messages(for: "old", count: 1)
                guard case .error(_, let errors)? = answer.first else {
                    Issue.record("expected error, got \(answer)")
                    return
                }
                #expect(errors.first?["extensions"]?["code"] == "sync_expired" && errors.first?["extensions"]?["field"] == "since")
                // The connection and its other subscription stay open.
                let rest = try await client.untilPong()
                #expect(rest.isEmpty)
            }
            #expect(closed.code == 1000)
        }
    }

    @Test(arguments: TestBackend.available)
    func completeStopsDeliveries(_ backend: TestBackend) async throws {
        try await GraphQLWSEndpointTests.start(backend) { server, alice, _ in
            let closed = try await GraphQLWSTestClient.connect(server) { client in
                try await client.initialize(token: alice.token)
                try await client.send(GraphQLWSEndpointTests.subscribe("first", Self.onCreateNote))
                _ = try await client.untilPong()
                try await Self.create(server, "c1", as: alice)
                let heard = try await client.messages(for: "first", count: 1)
                #expect(Self.deliveries(heard).map(\.id) == ["c1"])

                try await client.send(.complete(id: "first"))
                try await client.send(GraphQLWSEndpointTests.subscribe("second", Self.onCreateNote))
                _ = try await client.untilPong()
                try await Self.create(server, "c2", as: alice)
                var seen: [GraphQLWSMessage] = []
                while let message = try await client.receive() {
                    seen.append(message)
                    if message.id == "second" { break }
                }
                let tail = try await client.untilPong()
                seen += tail
                #expect(Self.deliveries(seen.filter { $0.id == "second" }).map(\.id) == ["c2"], "\(seen)")
                #expect(!seen.contains { $0.id == "first" }, "nothing after complete, not even a complete: \(seen)")

                // The id is free again once completed.
                try await client.send(GraphQLWSEndpointTests.subscribe("first", Self.onCreateNote))
                let reused = try await client.untilPong()
                #expect(reused.isEmpty, "\(reused)")
            }
            #expect(closed.code == 1000)
        }
    }

    /// The one hub that hands changes to every connection is cut off by the change feed when it falls too far behind
    /// (here it has no room for a change waiting, and two changes are committed together, so the second finds none):
    /// its connections are closed with 4410, the hub hears the feed again, and a client that resumes from its last seq
    /// has every note, once.
    @Test func aHubCutOffByTheFeedClosesItsConnectionsWith4410AndTheyResume() async throws {
        try await GraphQLWSEndpointTests.start(.sqlite, configure: { $0.graphQLWS.hubBuffer = 0 }) { server, alice, bob in
            let heard = Mutex<[(id: String, seq: Int64)]>([])
            let cut = try await GraphQLWSTestClient.connect(server) { client in
                try await client.initialize(token: alice.token)
                try await client.send(GraphQLWSEndpointTests.subscribe("notes", Self.onCreateNote))
                _ = try await client.untilPong()
                try await Self.create(server, "h1", as: alice)
                let first = Self.deliveries(try await client.messages(for: "notes", count: 1))
                heard.withLock { $0 += first }
                try await server.database.transaction { db in
                    for user in [alice, bob] { try await SessionEvents.ended(userId: user.id, on: db) }
                }
                server.feed.poke()
                while try await client.receive() != nil {}
            }
            #expect(cut.code == 4410 && cut.reason == "Fell behind: resume from your last seq", "\(cut)")
            try await Self.create(server, "h2", as: alice)  // while alice is away
            let since = try #require(heard.withLock { $0.last?.seq })
            let resumed = try await GraphQLWSTestClient.connect(server) { client in
                try await client.initialize(token: alice.token)
                try await client.send(GraphQLWSEndpointTests.subscribe("notes", Self.onCreateNote, variables: ["since": .string("\(since)")]))
                let replayed = Self.deliveries(try await client.messages(for: "notes", count: 1))
                try await Self.create(server, "h3", as: alice)
                let live = Self.deliveries(try await client.messages(for: "notes", count: 1))
                heard.withLock { $0 += replayed + live }
                let rest = try await client.untilPong()
                #expect(rest.isEmpty, "\(rest)")
            }
            #expect(resumed.code == 1000)
            let all = heard.withLock { $0 }
            #expect(all.map(\.id) == ["h1", "h2", "h3"] && Self.isIncreasing(all.map(\.seq)), "\(all)")
        }
    }
}
