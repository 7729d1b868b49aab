import Foundation
import KizunaCore
import KizunaTestSupport
import Testing

@testable import KizunaClient

/// `app.data.observe` against a live server over loopback, through a TCP proxy that takes the network away: a live
/// query follows remote changes and local sends, shows only what its user may read, answers from the device offline
/// (and after a relaunch), and catches up when the server is back.
///
/// The time limit is longer than a whole run on two cores: it also counts the test's wait for a server slot
/// (``ServerSlots``), which takes most of a run for a test queued last; at five minutes three tests failed that way.
@Suite("Offline cache and live queries", .timeLimit(.minutes(15)))
struct LiveQueryTests {
    struct Message: Codable, Sendable, Hashable {
        var id: String
        var roomId: String
        var text: String
        var createdAt: String
    }

    typealias Answers = AsyncThrowingStream<[LiveRecord<Message>], any Error>.Iterator

    /// The next answer that satisfies `condition`.
    static func next(_ answers: inout Answers, until condition: ([LiveRecord<Message>]) -> Bool) async throws -> [LiveRecord<Message>] {
        while let answer = try await answers.next() {
            if condition(answer) { return answer }
        }
        throw KizunaError(.internalError, "The live query ended.")
    }

    static func room(_ room: String) -> LiveQuery<Message> {
        LiveQuery("Message", matching: ["roomId": .string(room)], sortedBy: \.createdAt)
    }

    static func post(_ text: String, to room: String, from app: KizunaApp) async throws -> Message {
        try await app.data.mutate(
            "mutation($input: CreateMessageInput!) { createMessage(input: $input) { id roomId text createdAt } }",
            variables: ["input": ["roomId": .string(room), "text": .string(text)]], field: "createMessage")
    }

    static let quickly = GraphQLWSReconnectBackoff(base: .milliseconds(20), maximum: .milliseconds(200))

    /// Another device of the same user, straight to the server.
    static func phone(_ server: LiveServer, identifier: String) async throws -> KizunaApp {
        let phone = try AuthTests.app(server, directory: LiveServer.temporaryDirectory())
        try await phone.auth.signIn(identifier: identifier, password: AuthTests.password)
        return phone
    }

    /// Waits until no live query or subscription of `app` holds its socket (one left reconnecting could reach another
    /// test's server on a reused port).
    static func settle(_ app: KizunaApp) async {
        for await state in await app.data.connectionStates() where state == .idle { break }
    }

    @Test func aLiveQueryFollowsRemoteChangesAndLocalSendsAndShowsOnlyWhatItsUserMayRead() async throws {
        try await OutboxTests.withMio { server, proxy, app, room in
            await app.data.cache.setBackoff(Self.quickly)
            let phone = try await Self.phone(server, identifier: "mio@example.com")
            do {
                var answers = app.data.observe(Self.room(room)).makeAsyncIterator()
                #expect(try await Self.next(&answers) { _ in true }.isEmpty)

                // A change made elsewhere arrives through the cache's subscriptions.
                let remote = try await Self.post("from the phone", to: room, from: phone)
                let first = try await Self.next(&answers) { $0.map(\.value.text) == ["from the phone"] }
                #expect(first[0].id == remote.id && first[0].outboxItem == nil && first[0].value == remote)

                // A send through the outbox shows, then settles as the server's record, after the phone's.
                let item = try await app.data.outbox.send(
                    .create("Message", ["roomId": .string(room), "text": "from the mac"], parent: "Room:\(room)"))
                let both = try await Self.next(&answers) { $0.count == 2 && $0[1].outboxItem == nil }
                #expect(both.map(\.value.text) == ["from the phone", "from the mac"] && both[1].id == item.id)

                // An edit and a delete made elsewhere.
                let _: Message = try await phone.data.mutate(
                    "mutation($input: UpdateMessageInput!) { updateMessage(input: $input) { id roomId text createdAt } }",
                    variables: ["input": ["id": .string(remote.id), "text": "edited on the phone"]], field: "updateMessage")
                _ = try await Self.next(&answers) { $0.first?.value.text == "edited on the phone" }
                let _: Message = try await phone.data.mutate(
                    "mutation($input: DeleteMessageInput!) { deleteMessage(input: $input) { id roomId text createdAt } }",
                    variables: ["input": ["id": .string(remote.id)]], field: "deleteMessage")
                let left = try await Self.next(&answers) { $0.count == 1 }
                #expect(left.map(\.id) == [item.id])
            }
            await Self.settle(app)

            // Aki is in no room of Mio's: Aki's cache of every message holds Aki's own, and nothing of Mio's room.
            let aki = try AuthTests.app(server, directory: LiveServer.temporaryDirectory())
            await aki.data.cache.setBackoff(Self.quickly)
            let akis = try await aki.auth.signUp(identifier: "aki@example.com", password: AuthTests.password)
            struct Room: Decodable, Sendable { var id: String }
            let own: Room = try await aki.data.mutate(
                "mutation($input: CreateRoomInput!) { createRoom(input: $input) { id } }",
                variables: ["input": ["name": "aki's", "members": [.string(akis.id)]]], field: "createRoom")
            do {
                var answers = aki.data.observe(LiveQuery<Message>("Message", sortedBy: \.createdAt)).makeAsyncIterator()
                _ = try await Self.next(&answers) { _ in true }
                // Mio posts, then Aki: Aki's subscription gets changes in order, so Mio's would have come first.
                _ = try await Self.post("mio's secret", to: room, from: phone)
                let mine = try await Self.post("aki's own", to: own.id, from: aki)
                let seen = try await Self.next(&answers) { $0.contains { $0.id == mine.id } }
                #expect(seen.map(\.value.text) == ["aki's own"])
            }
            await Self.settle(aki)
        }
    }

    @Test func offlineALiveQueryAnswersFromTheDeviceAndCatchesUpWhenTheServerIsBack() async throws {
        try await LiveServer.run(configure: AuthTests.cheapHashing) { server in
            try await OutboxTests.publishChat(server)
            let proxy = try await TCPProxy.start(to: "127.0.0.1", port: server.port)
            let directory = LiveServer.temporaryDirectory()
            do {
                let (app, room) = try await OutboxTests.member(server, through: proxy, identifier: "ren@example.com", directory: directory)
                await app.data.cache.setBackoff(Self.quickly)
                let phone = try await Self.phone(server, identifier: "ren@example.com")
                do {
                    var answers = app.data.observe(Self.room(room)).makeAsyncIterator()
                    _ = try await Self.post("one", to: room, from: phone)
                    _ = try await Self.next(&answers) { $0.map(\.value.text) == ["one"] }
                }
                await Self.settle(app)

                // The app is relaunched with no network: the query answers from the device at once.
                await proxy.switchTo(.refuse)  // no network, on a port nobody else can take meanwhile
                let again = try Self.relaunch(app, through: proxy, directory: directory)
                try await Self.offline(again, room: room, phone: phone, proxy: proxy)
                await Self.settle(again)
            } catch {
                await proxy.cut()
                throw error
            }
            await proxy.cut()
        }
    }

    /// Offline, `app` answers the room from the device and shows a send at once; with the network back, the send goes
    /// and the cache catches up with what the phone posted meanwhile.
    static func offline(_ app: KizunaApp, room: String, phone: KizunaApp, proxy: TCPProxy) async throws {
        await app.data.cache.setBackoff(Self.quickly)
        await app.data.outbox.setBackoff(Self.quickly)
        var answers = app.data.observe(Self.room(room)).makeAsyncIterator()
        let cached = try await Self.next(&answers) { _ in true }
        #expect(cached.map(\.value.text) == ["one"])

        // A send offline shows at once, pending; a message posted elsewhere meanwhile waits on the server.
        let item = try await app.data.outbox.send(.create("Message", ["roomId": .string(room), "text": "two"], parent: "Room:\(room)"))
        let pending = try await Self.next(&answers, until: Self.holds(2))
        #expect(pending.map(\.value.text) == ["one", "two"] && pending[1].isPending && pending[1].outboxItem?.id == item.id)
        _ = try await Self.post("three", to: room, from: phone)

        // The network is back: the send goes, and the cache catches up with what it missed. The server stamps
        // `createdAt` when a message arrives, so "two", sent after "three" was posted, now sorts after it.
        await proxy.switchTo(.forward)
        try await app.data.outbox.sendNow()
        let caughtUp = try await Self.next(&answers, until: Self.settled(3))
        #expect(caughtUp.map(\.value.text) == ["one", "three", "two"])
    }

    static func holds(_ count: Int) -> ([LiveRecord<Message>]) -> Bool {
        { $0.count == count }
    }

    static func settled(_ count: Int) -> ([LiveRecord<Message>]) -> Bool {
        { answer in answer.count == count && answer.allSatisfy { $0.outboxItem == nil } }
    }

    /// The same app started again on the same directory and keychain (still signed in), through `proxy`.
    static func relaunch(_ app: KizunaApp, through proxy: TCPProxy, directory: URL) throws -> KizunaApp {
        let url = try #require(URL(string: "http://127.0.0.1:\(proxy.port)"))
        let store = try SecureStore(service: "kizuna.shop", fileOptions: .init(directory: directory.appendingPathComponent("secure")))
        return try KizunaApp(server: url, appId: "shop", directory: directory, device: app.device, secureStore: store)
    }
}
