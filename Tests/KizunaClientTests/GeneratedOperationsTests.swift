import ChatAPI
import Foundation
import KizunaCore
import TVScheduleAPI
import Testing

@testable import KizunaClient

/// The chat schema's generated Swift (`Examples/Chat/Generated`, the `ChatAPI` target) against a live server: every
/// kind of operation asks for what the server declares and decodes into the generated types, dates included.
///
/// The time limit is longer than a whole run on two cores: it also counts the test's wait for a server slot
/// (``ServerSlots``), which takes most of a run for a test queued last; at five minutes three tests failed that way.
@Suite("Generated operations", .timeLimit(.minutes(15)))
struct GeneratedOperationsTests {
    @Test func typedOperationsRunAgainstTheServerAndDecodeIntoTheGeneratedTypes() async throws {
        try await LiveServer.run(configure: AuthTests.cheapHashing) { server in
            try await OutboxTests.publishChat(server)
            let app = try AuthTests.app(server, directory: LiveServer.temporaryDirectory())
            let mio = try await app.auth.signUp(identifier: "mio@example.com", password: AuthTests.password)
            let room = try await app.data.run(Room.create(CreateRoomInput(name: "lobby", members: [mio.id])))
            #expect(room.name == "lobby" && room._version == 1)

            let (arrivals, arrived) = AsyncStream.makeStream(of: Message.self)
            let listening = Task {
                for try await case .value(let message, _) in app.data.subscribe(Message.onCreate()) { arrived.yield(message) }
            }
            for await state in await app.data.connectionStates() where state == .connected { break }

            let first = try await app.data.run(Message.create(CreateMessageInput(roomId: room.id, text: "hello")))
            #expect(first.owner == mio.id && first._version == 1 && abs(first.createdAt.timeIntervalSinceNow) < 600)
            var heard = arrivals.makeAsyncIterator()
            #expect(await heard.next() == first)

            // The outbox with a generated input: the answer carries every field of the record.
            let item = try await app.data.outbox.send(.create(CreateMessageInput(roomId: room.id, text: "second"), parent: "Room:\(room.id)"))
            let states = await OutboxTests.states(of: item.id, in: app)
            guard case .sent(let record)? = states.last else {
                Issue.record("\(states)")
                return
            }
            #expect(record["text"] == "second" && record["owner"] == .string(mio.id) && record["createdAt"]?.stringValue != nil)

            // The index query, newest first, and with a condition on its sort key.
            let page = try await app.data.run(Message.listByRoom(roomId: room.id, sortDirection: .descending))
            #expect(page.items.map(\.text) == ["second", "hello"] && page.nextToken == nil)
            let since = try await app.data.run(Message.listByRoom(roomId: room.id, createdAt: .ge(first.createdAt)))
            #expect(since.items.map(\.text) == ["hello", "second"])
            let later = try await app.data.run(Message.listByRoom(roomId: room.id, createdAt: .gt(first.createdAt.addingTimeInterval(3600))))
            #expect(later.items.isEmpty)

            // Update from the version read, then get.
            let edited = try await app.data.run(Message.update(UpdateMessageInput(id: first.id, text: "hello, edited", _version: first._version)))
            #expect(edited.text == "hello, edited" && edited._version == 2)
            #expect(try await app.data.run(Message.get(id: first.id)) == edited)
            let stale = await #expect(throws: DataError.self) {
                try await app.data.run(Message.update(UpdateMessageInput(id: first.id, text: "again", _version: 1)))
            }
            #expect(stale?.code == .conflict)

            // A live query on the generated model.
            do {
                let query = LiveQuery<Message>(matching: ["roomId": .string(room.id)], sortedBy: \.createdAt)
                var answers = app.data.observe(query).makeAsyncIterator()
                var texts: [String] = []
                while texts != ["hello, edited", "second"], let answer = try await answers.next() { texts = answer.map(\.value.text) }
                #expect(texts == ["hello, edited", "second"])
            }

            let deleted = try await app.data.run(Message.delete(DeleteMessageInput(id: item.id)))
            #expect(deleted.id == item.id)
            listening.cancel()
            for await state in await app.data.connectionStates() where state == .idle { break }
        }
    }

    @Test func generatedEnumsAndInputsCarryTheSchemasNames() throws {
        #expect(Genre.allCases.map(\.rawValue) == ["NEWS", "DRAMA", "FILM", "MUSIC", "QUIZ", "COOKING"])
        let starts = Date(timeIntervalSince1970: 1_796_158_800.5)
        let input = CreateProgrammeInput(
            channelId: "ch-1", title: "Late film", startsAt: starts, endsAt: starts.addingTimeInterval(9000), genre: .film)
        #expect(
            input.graphQLValue == [
                "channelId": "ch-1", "title": "Late film", "startsAt": "2026-12-01T21:00:00.500Z", "endsAt": "2026-12-01T23:30:00.500Z",
                "genre": "FILM",
            ])
        let night = Programme.listByChannel(channelId: "ch-1", startsAt: .between(starts, starts.addingTimeInterval(25200)))
        #expect(night.variables["startsAt"] == ["between": ["2026-12-01T21:00:00.500Z", "2026-12-02T04:00:00.500Z"]])
        #expect(night.document.hasPrefix("query ListProgrammesByChannel($channelId: ID!, $startsAt: ModelDateTimeKeyConditionInput"))
        let json =
            #"{"id": "p1", "channelId": "ch-1", "title": "Late film", "startsAt": "2026-12-01T21:00:00.500Z", "#
            + #""endsAt": "2026-12-01T23:30:00Z", "genre": "FILM", "createdAt": "2026-11-26T00:00:00.000Z", "#
            + #""updatedAt": "2026-11-26T00:00:00.000Z", "_version": 1}"#
        let programme = try WireFormat.decoder().decode(Programme.self, from: Data(json.utf8))
        #expect(programme.genre == .film && programme.startsAt == starts)
        // A genre added to the schema after this code was generated: decoded, and sent back as it came.
        let newer = json.replacingOccurrences(of: #""genre": "FILM""#, with: #""genre": "DOCUMENTARY""#)
        let documentary = try WireFormat.decoder().decode(Programme.self, from: Data(newer.utf8))
        #expect(documentary.genre == .unknown("DOCUMENTARY") && documentary.genre?.graphQLValue == "DOCUMENTARY")
        #expect(Genre(rawValue: "FILM") == .film && Genre.allCases.count == 6)
    }

    @Test func aSendShowsAtOnceInALiveQueryOfTheGeneratedModel() async throws {
        // No server at all (nothing listens on port 1): the send stays pending, and the live query shows it.
        let directory = LiveServer.temporaryDirectory()
        let app = try KizunaApp(
            server: try #require(URL(string: "http://127.0.0.1:1")), appId: "chat", directory: directory,
            device: DeviceContext(appVersion: "1.0", platform: .ios),
            secureStore: try SecureStore(service: "kizuna.chat", fileOptions: .init(directory: directory.appendingPathComponent("secure"))))
        var answers = app.data.observe(LiveQuery<Message>(matching: ["roomId": "r1"], sortedBy: \.createdAt)).makeAsyncIterator()
        #expect(try await answers.next()?.isEmpty == true)
        let item = try await app.data.outbox.send(.create(CreateMessageInput(roomId: "r1", text: "offline"), parent: "Room:r1"))
        var shown: [LiveRecord<Message>] = []
        while shown.isEmpty, let answer = try await answers.next() { shown = answer }
        #expect(shown.map(\.value.text) == ["offline"] && shown.first?.isPending == true && shown.first?.id == item.id)
        // Stamped with when it was queued, to the millisecond a DateTime carries.
        let stamped = try #require(shown.first?.value)
        #expect(stamped._version == 0 && abs(stamped.createdAt.timeIntervalSince(item.queuedAt)) < 0.001)
    }
}
