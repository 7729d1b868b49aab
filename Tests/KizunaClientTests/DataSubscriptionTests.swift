import Foundation
import KizunaCore
import KizunaServer
import KizunaTestSupport
import Synchronization
import Testing

@testable import KizunaClient

/// `app.data.subscribe` against a live server over loopback WebSockets (swift-websocket's client on Linux): changes
/// decoded into the app's type with their seq, the socket's states as the app sees them, and a subscription that
/// outlives the server — stopped, and started again on the same store — resuming after its last seq with nothing
/// missed and nothing twice.
@Suite("Data API subscriptions through the SDK")
struct DataSubscriptionTests {
    typealias Note = DataClientTests.Note
    static let onCreateNote = "subscription($since: String) { onCreateNote(since: $since) { id text rank } }"

    /// What a subscription delivered, in order, for the test to wait on.
    final class Collected: Sendable {
        let notes = Mutex<[(note: Note, seq: Int64)]>([])
        let changed: AsyncStream<Void>
        private let changes: AsyncStream<Void>.Continuation

        init() {
            (changed, changes) = AsyncStream.makeStream(of: Void.self)
        }

        func add(_ note: Note, seq: String?) {
            notes.withLock { $0.append((note, seq.flatMap { Int64($0) } ?? -1)) }
            changes.yield()
        }

        /// Returns once `count` notes arrived (or the subscription ended); after a minute, records an issue instead of
        /// hanging the suite.
        func wait(for count: Int, sourceLocation: SourceLocation = #_sourceLocation) async {
            let arrived = await finishes(within: .seconds(60)) {
                var iterator = self.changed.makeAsyncIterator()
                while self.notes.withLock({ $0.count }) < count, await iterator.next() != nil {}
            }
            if !arrived { Issue.record("\(count) notes did not arrive within a minute", sourceLocation: sourceLocation) }
        }

        func end() { changes.finish() }
    }

    /// Consumes a subscription into `collected` until cancelled or ended; a `resync` is an issue (nothing is missed).
    static func consume(_ app: KizunaApp, since: String?, into collected: Collected) -> Task<Void, any Error> {
        Task {
            defer { collected.end() }
            let variables: [String: JSONValue] = since.map { ["since": .string($0)] } ?? [:]
            for try await event in app.data.subscribe(Self.onCreateNote, variables: variables, field: "onCreateNote", as: Note.self) {
                switch event {
                case .value(let note, let seq): collected.add(note, seq: seq)
                case .resync: Issue.record("a resync: something was missed")
                }
            }
        }
    }

    static func create(_ app: KizunaApp, _ text: String) async throws -> Note {
        try await app.data.mutate(DataClientTests.create, variables: ["input": ["text": .string(text)]], field: "createNote")
    }

    static func setUp(_ server: LiveServer, directory: URL) async throws -> KizunaApp {
        try await server.createShop()
        let schema = SchemaDocument.document(sdl: DataClientTests.schema)
        _ = try await server.admin.publish(.schema, app: "shop", document: schema, message: nil, expecting: .any)
        let app = try AuthTests.app(server, directory: directory)
        try await app.auth.signUp(identifier: "mio@example.com", password: AuthTests.password)
        return app
    }

    @Test func changesArriveDecodedWithTheirSeqAndTheSocketClosesAfterTheLastSubscription() async throws {
        try await LiveServer.run(configure: AuthTests.cheapHashing) { server in
            let app = try await Self.setUp(server, directory: LiveServer.temporaryDirectory())
            let first = try await Self.create(app, "before")
            let states = await app.data.connectionStates()
            let collected = Collected()
            // Since seq 0: the note written before is replayed, so the subscription is live once it has arrived.
            let consumer = Self.consume(app, since: "0", into: collected)
            await collected.wait(for: 1)
            let second = try await Self.create(app, "after")
            await collected.wait(for: 2)
            let notes = collected.notes.withLock { $0 }
            #expect(notes.map { $0.note } == [first, second])
            #expect(notes.count == 2 && notes[0].seq > 0 && notes[0].seq < notes[1].seq, "\(notes)")
            consumer.cancel()
            // The states it went through: idle, connecting, connected, and idle again once the last subscription ended.
            var seen: [DataConnectionState] = []
            for await state in states {
                seen.append(state)
                if state == .idle && seen.count > 1 { break }
            }
            #expect(seen == [.idle, .connecting, .connected, .idle], "\(seen)")
        }
    }

    @Test func aSubscriptionOutlivesAServerRestartAndResumesWithNoGap() async throws {
        let store = LiveServer.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: store) }
        let sameStore = { (configuration: inout KizunaConfiguration) in
            AuthTests.cheapHashing(&configuration)
            configuration.database = .sqlite(dataDirectory: store.path)
        }
        let collected = Collected()
        // The app talks to a proxy, which keeps its port while the server behind it goes and comes back on another:
        // the SDK's reconnects reach this test's server or nothing.
        let (app, proxy, consumer, first) = try await LiveServer.run(configure: sameStore) { server in
            let proxy = try await TCPProxy.start(to: "127.0.0.1", port: server.port)
            let directory = LiveServer.temporaryDirectory()
            try await server.createShop()
            _ = try await server.admin.publish(
                .schema, app: "shop", document: SchemaDocument.document(sdl: DataClientTests.schema), message: nil, expecting: .any)
            let app = try KizunaApp(
                server: try #require(URL(string: "http://127.0.0.1:\(proxy.port)")), appId: "shop", directory: directory,
                device: DeviceContext(appVersion: "1.0", platform: .ios),
                secureStore: try SecureStore(service: "kizuna.shop", fileOptions: .init(directory: directory.appendingPathComponent("secure"))))
            try await app.auth.signUp(identifier: "mio@example.com", password: AuthTests.password)
            let consumer = Self.consume(app, since: "0", into: collected)
            let first = try await Self.create(app, "one")
            await collected.wait(for: 1)
            await proxy.switchTo(.refuse)  // the server goes: the SDK retries with backoff and gets nowhere
            return (app, proxy, consumer, first)
        }
        let (second, third) = try await LiveServer.run(announcesToken: false, configure: sameStore) { server in
            await proxy.switchTo(.forward, port: server.port)
            let second = try await Self.create(app, "two")  // perhaps before the subscription is back: replayed
            await collected.wait(for: 2)
            let third = try await Self.create(app, "three")  // live
            await collected.wait(for: 3)
            consumer.cancel()
            for await state in await app.data.connectionStates() where state == .idle { break }
            return (second, third)
        }
        await proxy.cut()
        let notes = collected.notes.withLock { $0 }
        #expect(notes.map { $0.note } == [first, second, third], "every note once, in order: \(notes)")
        #expect(zip(notes, notes.dropFirst()).allSatisfy { $0.seq < $1.seq })
    }

    @Test func theSocketIsReopenedAsTheAccountThatSignedInAndItsSubscriptionsGoOn() async throws {
        try await LiveServer.run(configure: AuthTests.cheapHashing) { server in
            try await ExampleSchemaTests.publish("TVSchedule", as: "tv", on: server)
            let key = try await server.admin.createAPIKey(app: "tv", NewAPIKey(name: "ios", expiresInDays: 30)).key
            let directory = LiveServer.temporaryDirectory()
            let app = try KizunaApp(
                server: server.url, appId: "tv", directory: directory, device: DeviceContext(appVersion: "1.0", platform: .ios),
                secureStore: try SecureStore(service: "kizuna.tv", fileOptions: .init(directory: directory.appendingPathComponent("secure"))))
            let data = app.data(apiKey: key)
            struct Channel: Decodable, Sendable { var name: String }
            let (names, heard) = AsyncStream.makeStream(of: String.self)
            let listening = Task {
                let document = "subscription($since: String) { onCreateChannel(since: $since) { name } }"
                for try await case .value(let channel, _) in data.subscribe(document, field: "onCreateChannel", as: Channel.self) {
                    heard.yield(channel.name)
                }
            }
            var states = await data.connectionStates().makeAsyncIterator()
            var reached: DataConnectionState?
            while reached != .connected, let state = await states.next() { reached = state }
            try #require(reached == .connected)

            // Signing in replaces the socket, opened as nobody, with one opened as the account; the subscription
            // resumes on it.
            try await app.auth.signUp(identifier: "mio@example.com", password: AuthTests.password)
            var seen: [DataConnectionState] = []
            while let state = await states.next() {
                seen.append(state)
                if state == .connected { break }
            }
            #expect(seen.first == .disconnected && seen.last == .connected, "\(seen)")
            try await ExampleSchemaTests.asOperator(
                server, app: "tv", "mutation { createChannel(input: {id: \"ch-1\", name: \"One\", number: 1}) { id } }", [:])
            var iterator = names.makeAsyncIterator()
            #expect(await iterator.next() == "One")
            listening.cancel()
            reached = nil
            while reached != .idle, let state = await states.next() { reached = state }
            #expect(reached == .idle)
        }
    }
}
