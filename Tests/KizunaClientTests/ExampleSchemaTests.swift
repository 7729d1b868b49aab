import Foundation
import KizunaCore
import Testing

@testable import KizunaClient

/// The index-query examples (`Examples/Conference`, `Examples/TVSchedule`) against a live server: each schema
/// published as its README says, data added as the operator, and the README's own query blocks run through the SDK as
/// the app would run them, answered in index order.
@Suite("Examples: conference timetable and TV schedule")
struct ExampleSchemaTests {
    static func exampleFile(_ example: String, _ name: String) throws -> String {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../Examples/\(example)/\(name)")
        return try String(contentsOf: file, encoding: .utf8)
    }

    /// The README's ```graphql blocks, in order.
    static func queries(_ example: String) throws -> [String] {
        try exampleFile(example, "README.md").components(separatedBy: "```graphql\n").dropFirst().map {
            $0.components(separatedBy: "```")[0]
        }
    }

    /// Registers `app` and publishes its example's schema.
    static func publish(_ example: String, as app: String, on server: LiveServer) async throws {
        _ = try await server.admin.createApp(NewApp(id: app, name: example, platform: .ios, bundleId: "com.example.\(app)", teamId: "ABCDE12345"))
        let sdl = try exampleFile(example, "schema.graphql")
        _ = try await server.admin.publish(.schema, app: app, document: SchemaDocument.document(sdl: sdl), message: nil, expecting: .any)
    }

    /// Runs a document as the operator; records its errors.
    static func asOperator(_ server: LiveServer, app: String, _ document: String, _ variables: [String: JSONValue]) async throws {
        let answer = try await server.admin.query(document, app: app, variables: variables)
        #expect(answer["errors"] == nil, "\(answer)")
    }

    struct Page<Item: Decodable & Sendable>: Decodable, Sendable {
        var items: [Item]
        var nextToken: String?
    }

    struct Talk: Decodable, Sendable {
        struct Speaker: Decodable, Sendable { var name: String }
        var title: String
        var speaker: Speaker?
    }

    @Test func theConferenceTimetableIsAnsweredByDayByRoomAndBySpeakerInStartOrder() async throws {
        try await LiveServer.run(configure: AuthTests.cheapHashing) { server in
            try await Self.publish("Conference", as: "conference", on: server)
            let queries = try Self.queries("Conference")
            try #require(queries.count == 4)
            // Added out of order: the index orders them. A speaker added twice with the same input is stored once.
            let programme: [(speaker: String, title: String, day: String, room: String, at: String)] = [
                ("Linus", "GraphQL at scale", "2026-12-01", "Hall A", "14:00"), ("Ada", "Push", "2026-12-02", "Hall B", "09:00"),
                ("Ada", "Keynote", "2026-12-01", "Hall A", "09:00"), ("Grace", "Swift on the server", "2026-12-01", "Hall B", "10:00"),
                ("Grace", "Day two opening", "2026-12-02", "Hall A", "09:30"), ("Ada", "Offline first", "2026-12-01", "Hall A", "11:00"),
            ]
            for talk in programme {
                try await Self.asOperator(
                    server, app: "conference", queries[0],
                    [
                        "speaker": ["id": .string("sp-\(talk.speaker)"), "name": .string(talk.speaker)],
                        "talk": [
                            "title": .string(talk.title), "day": .string(talk.day), "room": .string(talk.room),
                            "startsAt": .string("\(talk.day)T\(talk.at):00Z"), "minutes": 45, "speakerId": .string("sp-\(talk.speaker)"),
                        ],
                    ])
            }

            // An attendee, signed in, reads the timetable.
            let directory = LiveServer.temporaryDirectory()
            let app = try KizunaApp(
                server: server.url, appId: "conference", directory: directory, device: DeviceContext(appVersion: "1.0", platform: .ios),
                secureStore: try SecureStore(service: "conference", fileOptions: .init(directory: directory.appendingPathComponent("secure"))))
            _ = try await app.auth.signUp(identifier: "attendee@example.com", password: AuthTests.password)
            let day: Page<Talk> = try await app.data.query(queries[1], variables: ["day": "2026-12-01"], field: "listTalksByDay")
            #expect(day.items.map(\.title) == ["Keynote", "Swift on the server", "Offline first", "GraphQL at scale"])
            #expect(day.items.map { $0.speaker?.name } == ["Ada", "Grace", "Ada", "Linus"])
            let room: Page<Talk> = try await app.data.query(
                queries[2], variables: ["room": "Hall A", "from": "2026-12-01T00:00:00Z", "to": "2026-12-01T23:59:59Z"], field: "listTalksByRoom")
            #expect(room.items.map(\.title) == ["Keynote", "Offline first", "GraphQL at scale"])
            let ada: Page<Talk> = try await app.data.query(queries[3], variables: ["speaker": "sp-Ada"], field: "listTalksBySpeaker")
            #expect(ada.items.map(\.title) == ["Push", "Offline first", "Keynote"])
        }
    }

    struct Programme: Decodable, Sendable { var title: String }

    @Test func theLateNightViewCrossesMidnightAndKeepsWhatIsStillOn() async throws {
        try await LiveServer.run { server in
            try await Self.publish("TVSchedule", as: "tv", on: server)
            let queries = try Self.queries("TVSchedule")
            try #require(queries.count == 3)
            try await Self.asOperator(
                server, app: "tv", "mutation { createChannel(input: {id: \"ch-1\", name: \"One\", number: 1}) { id } }", [:])
            let schedule: [(title: String, starts: String, ends: String)] = [
                ("Night music", "2026-12-02T01:00", "2026-12-02T03:00"), ("Lunchtime", "2026-12-01T12:00", "2026-12-01T13:00"),
                ("Quiz", "2026-12-01T19:00", "2026-12-01T20:00"), ("Late film", "2026-12-01T21:00", "2026-12-01T23:30"),
                ("Midnight news", "2026-12-01T23:30", "2026-12-02T00:30"), ("Morning news", "2026-12-02T04:00", "2026-12-02T05:00"),
                ("Cooking", "2026-12-02T10:00", "2026-12-02T11:00"),
            ]
            for programme in schedule {
                try await Self.asOperator(
                    server, app: "tv", queries[0],
                    [
                        "programme": [
                            "channelId": "ch-1", "title": .string(programme.title), "startsAt": .string(programme.starts + ":00Z"),
                            "endsAt": .string(programme.ends + ":00Z"),
                        ]
                    ])
            }

            // A viewer with no account: the app's API key.
            let key = try await server.admin.createAPIKey(app: "tv", NewAPIKey(name: "ios", expiresInDays: 30)).key
            let app = try KizunaApp(
                server: server.url, appId: "tv", directory: LiveServer.temporaryDirectory(), device: DeviceContext(appVersion: "1.0", platform: .ios))
            let data = app.data(apiKey: key)
            let day: Page<Programme> = try await data.query(
                queries[1], variables: ["channel": "ch-1", "from": "2026-12-01T00:00:00Z", "to": "2026-12-01T23:59:59Z"],
                field: "listProgrammesByChannel")
            #expect(day.items.map(\.title) == ["Lunchtime", "Quiz", "Late film", "Midnight news"])
            let night: Page<Programme> = try await data.query(
                queries[2],
                variables: [
                    "channel": "ch-1", "earliest": "2026-12-01T16:00:00Z", "windowStart": "2026-12-01T22:00:00Z",
                    "windowEnd": "2026-12-02T04:00:00Z",
                ],
                field: "listProgrammesByChannel")
            #expect(night.items.map(\.title) == ["Late film", "Midnight news", "Night music"])
            // Without the key, public rules let nobody in.
            let refused = try await app.data.execute(
                queries[1], variables: ["channel": "ch-1", "from": "2026-12-01T00:00:00Z", "to": "2026-12-01T23:59:59Z"])
            #expect(refused.errors.first?.code == .unauthorized, "\(refused)")
        }
    }
}
