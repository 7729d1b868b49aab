import Foundation
import KizunaCore
import KizunaTestSupport
import Synchronization
import Testing

@testable import KizunaClient

/// `app.data.outbox` against a live server over loopback, the network taken away and given back by a TCP proxy
/// between the app and the server: mutations queued offline arrive in order and once, a refused one carries the
/// server's typed error and can be retried with a fix or discarded.
@Suite("Outbox through the SDK")
struct OutboxTests {
    /// The chat example's schema: rooms their members own, messages the room's members post and read.
    static var schema: String {
        get throws {
            let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Examples/Chat/schema.graphql")
            return try String(contentsOf: file, encoding: .utf8)
        }
    }

    struct Message: Codable, Sendable, Hashable {
        var id: String
        var roomId: String
        var text: String
    }

    /// A signed-up user's app whose requests go through `proxy`, and a room the user is a member of.
    static func member(
        _ server: LiveServer, through proxy: TCPProxy, identifier: String, directory: URL = LiveServer.temporaryDirectory()
    ) async throws -> (app: KizunaApp, room: String) {
        let url = try #require(URL(string: "http://127.0.0.1:\(proxy.port)"))
        let store = try SecureStore(service: "kizuna.shop", fileOptions: .init(directory: directory.appendingPathComponent("secure")))
        let app = try KizunaApp(
            server: url, appId: "shop", directory: directory, device: DeviceContext(appVersion: "1.0", platform: .ios), secureStore: store)
        await app.data.outbox.setBackoff(GraphQLWSReconnectBackoff(base: .milliseconds(20), maximum: .milliseconds(200)))
        let account = try await app.auth.signUp(identifier: identifier, password: AuthTests.password)
        struct Room: Decodable, Sendable { var id: String }
        let room: Room = try await app.data.mutate(
            "mutation($input: CreateRoomInput!) { createRoom(input: $input) { id } }",
            variables: ["input": ["name": "lobby", "members": [.string(account.id)]]], field: "createRoom")
        return (app, room.id)
    }

    /// A live server with the chat's schema, and Mio's app, signed up, talking to it through a proxy, with a room of
    /// Mio's; the proxy is cut when `body` returns.
    static func withMio(_ body: (LiveServer, TCPProxy, KizunaApp, String) async throws -> Void) async throws {
        try await LiveServer.run(configure: AuthTests.cheapHashing) { server in
            try await publishChat(server)
            let proxy = try await TCPProxy.start(to: "127.0.0.1", port: server.port)
            do {
                let (app, room) = try await member(server, through: proxy, identifier: "mio@example.com")
                try await body(server, proxy, app, room)
            } catch {
                await proxy.cut()
                throw error
            }
            await proxy.cut()
        }
    }

    static func publishChat(_ server: LiveServer) async throws {
        try await server.createShop()
        _ = try await server.admin.publish(.schema, app: "shop", document: SchemaDocument.document(sdl: try schema), message: nil, expecting: .any)
    }

    /// The states of `id` until it is sent (the stream's end).
    static func states(of id: String, in app: KizunaApp) async -> [OutboxItem.State] {
        var states: [OutboxItem.State] = []
        for await state in await app.data.outbox.states(of: id) { states.append(state) }
        return states
    }

    /// Waits for the outbox's item list to satisfy `condition`, and answers it.
    static func items(of app: KizunaApp, until condition: ([OutboxItem]) -> Bool) async throws -> [OutboxItem] {
        for await items in try await app.data.outbox.items() where condition(items) { return items }
        return []
    }

    @Test func messagesQueuedOfflineArriveInOrderAndOnceWhenTheServerIsBack() async throws {
        try await Self.withMio { server, proxy, app, room in

            // Another device of the same user watches the room, straight to the server.
            let watcher = try AuthTests.app(server, directory: LiveServer.temporaryDirectory())
            try await watcher.auth.signIn(identifier: "mio@example.com", password: AuthTests.password)
            let (arrivals, arrived) = AsyncStream.makeStream(of: String.self)
            let watching = Task {
                let subscription = "subscription($since: String) { onCreateMessage(since: $since) { id roomId text } }"
                for try await case .value(let message, _) in watcher.data.subscribe(subscription, field: "onCreateMessage", as: Message.self) {
                    arrived.yield(message.text)
                }
            }
            defer { watching.cancel() }
            for await state in await watcher.data.connectionStates() where state == .connected { break }

            await proxy.switchTo(.refuse)  // offline, on a port nobody else can take meanwhile
            var queued: [OutboxItem] = []
            for text in ["one", "two", "three", "four", "five"] {
                let mutation = OutboxMutation.create(
                    "Message", ["roomId": .string(room), "text": .string(text)], parent: "Room:\(room)", selection: "id roomId text")
                queued.append(try await app.data.outbox.send(mutation))
            }
            #expect(queued.allSatisfy { $0.state == .pending && $0.mutation.recordId == $0.id })
            // Offline, the room's first message is tried and backs off; the rest wait behind it, untried.
            let waiting = try await Self.items(of: app) { $0.first?.attempts ?? 0 >= 2 && $0.first?.state == .pending }
            #expect(waiting.map(\.id) == queued.map(\.id))
            #expect(waiting.dropFirst().allSatisfy { $0.attempts == 0 && $0.state == .pending })

            await proxy.switchTo(.forward)
            try await app.data.outbox.sendNow()
            let states = await Self.states(of: queued[4].id, in: app)
            guard case .sent(let record)? = states.last else {
                Issue.record("The last message ended \(states)")
                return
            }
            #expect(record == ["id": .string(queued[4].id), "roomId": .string(room), "text": "five"])
            var texts: [String] = []
            for await text in arrivals.prefix(5) { texts.append(text) }
            #expect(texts == ["one", "two", "three", "four", "five"])
            let page: [String: [Message]] = try await watcher.data.query(
                "query($room: ID!) { listMessagesByRoom(roomId: $room) { items { id roomId text } } }", variables: ["room": .string(room)],
                field: "listMessagesByRoom")
            #expect(page["items"]?.count == 5)
            #expect(try await Self.items(of: app) { $0.isEmpty }.isEmpty)
            // The watcher's socket closes before the server goes (a socket left reconnecting could reach another
            // test's server on a reused port).
            watching.cancel()
            for await state in await watcher.data.connectionStates() where state == .idle { break }
        }
    }

    @Test func aRefusedItemCarriesTheServersErrorAndIsRetriedWithAFixOrDiscarded() async throws {
        try await Self.withMio { server, proxy, app, room in
            let outbox = app.data.outbox

            // A message without its text: validation_failed (GraphQL's, for a required input field); the room's next
            // message goes on.
            let bad = try await outbox.send(.create("Message", ["roomId": .string(room)], parent: "Room:\(room)"))
            let next = try await outbox.send(.create("Message", ["roomId": .string(room), "text": "after"], parent: "Room:\(room)"))
            #expect(await Self.states(of: next.id, in: app).last.map { if case .sent = $0 { true } else { false } } == true)
            guard case .failed(let error)? = await outbox.item(bad.id)?.state else {
                Issue.record("\(String(describing: await outbox.item(bad.id)))")
                return
            }
            #expect(error.code == .validationFailed && error.message.contains("$input"), "\(error)")
            try await outbox.retry(bad.id, with: .create("Message", ["roomId": .string(room), "text": "fixed"], parent: "Room:\(room)"))
            let retried = await Self.states(of: bad.id, in: app)
            #expect(retried.last == .sent(["id": .string(bad.id)]), "\(retried)")

            // An update from a stale version: a conflict carrying the stored record, to merge with; discarded here.
            let edit = try await outbox.send(.update("Message", ["id": .string(bad.id), "text": "edited", "_version": 7]))
            let failed = try await Self.items(of: app) { $0.first.map { if case .failed = $0.state { true } else { false } } ?? false }
            let conflict = try #require(failed.first)
            #expect(conflict.id == edit.id && conflict.current?["text"] == "fixed" && conflict.current?["_version"] == 1, "\(conflict)")
            await #expect(throws: KizunaError.self) { try await outbox.retry(next.id) }
            try await outbox.discard(edit.id)
            #expect(await outbox.item(edit.id) == nil)
            #expect(try await Self.items(of: app) { _ in true }.isEmpty)
            var ended = await outbox.states(of: edit.id).makeAsyncIterator()
            #expect(await ended.next() == nil)
        }
    }

    @Test func anItemIsSentAsTheUserWhoQueuedItAndWaitsWhileAnotherIsSignedIn() async throws {
        try await Self.withMio { server, proxy, app, room in
            let mio = try #require(await app.auth.account?.id)
            // Queued offline, tried once; the backoff is long, so nothing but the calls below sends it.
            await app.data.outbox.setBackoff(GraphQLWSReconnectBackoff(base: .seconds(3600), maximum: .seconds(3600)))
            await proxy.switchTo(.refuse)  // offline, on a port nobody else can take meanwhile
            let item = try await app.data.outbox.send(
                .create("Message", ["roomId": .string(room), "text": "mine"], parent: "Room:\(room)", selection: "id owner"))
            _ = try await Self.items(of: app) { $0.first?.attempts == 1 && $0.first?.state == .pending }
            await proxy.switchTo(.forward)

            // Sora on the same device: Mio's message is not Sora's to send (Sora is not even in the room).
            try await app.auth.signOut()
            try await app.auth.signUp(identifier: "sora@example.com", password: AuthTests.password)
            try await app.data.outbox.sendNow()
            #expect(await app.data.outbox.item(item.id)?.state == .pending)

            // Mio again: the sign-in alone wakes the outbox (its backoff was cleared while Sora was in, and nothing else
            // would), and the message goes out as Mio's; sent as Sora it would have failed, forbidden.
            try await app.auth.signOut()
            try await app.auth.signIn(identifier: "mio@example.com", password: AuthTests.password)
            let states = await Self.states(of: item.id, in: app)
            #expect(states.last == .sent(["id": .string(item.id), "owner": .string(mio)]), "\(states)")
        }
    }
}
