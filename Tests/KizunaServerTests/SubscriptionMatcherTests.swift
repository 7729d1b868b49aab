import KizunaCore
import Testing

@testable import KizunaServer

/// Which subscribers a data change goes to, and what each is sent: the same read rules as queries (a `via` rule's
/// related record loaded once per change), the same filter semantics, and each change to its kind of subscription.
@Suite("Subscription deliveries")
struct SubscriptionMatcherTests {
    typealias Subscriber = SubscriptionMatcher.Subscriber<String>

    /// A subscriber known by `key`.
    static func subscriber(_ key: String, _ caller: DataCaller, _ query: String, on fixture: SubscriptionFixture) async throws -> Subscriber {
        Subscriber(key: key, caller: caller, request: try await fixture.subscribe(query, as: caller))
    }

    @Test(arguments: TestBackend.available)
    func anotherUsersChangeIsNeverDelivered(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            let fixture = try await SubscriptionFixture.make(database)
            let matcher = SubscriptionMatcher(runtime: fixture.runtime)
            var subscribers: [Subscriber] = []
            for (name, caller) in [("alice", SubscriptionFixture.alice), ("bob", SubscriptionFixture.bob), ("carol", SubscriptionFixture.carol)] {
                for kind in ["Create", "Update", "Delete"] {
                    let query = "subscription { on\(kind)Note { id text owner _deleted } }"
                    subscribers.append(try await Self.subscriber(name, caller, query, on: fixture))
                }
            }
            // 90 changes to 30 notes, each created, updated and deleted; carol owns none.
            var delivered: [String: [Int64]] = [:]
            var expected: [String: [Int64]] = [:]
            var seq: Int64 = 0
            for version in Int64(1)...3 {
                for index in 0..<30 {
                    seq += 1
                    let owner = index % 3 == 0 ? "bob" : "alice"
                    let record: [String: JSONValue] = ["id": .string("n\(index)"), "text": .string("v\(version)"), "owner": .string(owner)]
                    let change = SubscriptionFixture.change(seq, "Note", record, version: version, deleted: version == 3)
                    for delivery in try await matcher.deliveries(of: change, to: subscribers) {
                        delivered[delivery.key, default: []].append(seq)
                        let data = delivery.payload["data"]?.objectValue?.values.first
                        #expect(data?["owner"] == .string(delivery.key) && data?["text"] == .string("v\(version)"))
                        #expect(delivery.payload["extensions"]?["seq"] == .string(String(seq)))
                    }
                    expected[owner, default: []].append(seq)
                }
            }
            // Each owner gets each of its changes once (one subscription per kind), and nobody else's.
            #expect(delivered == expected)
            #expect(delivered["carol"] == nil)
            // Another app's change, or another kind, goes to nobody.
            var foreign = SubscriptionFixture.change(seq + 1, "Note", ["id": "x", "owner": "alice"], version: 1)
            foreign.entityId = "other-app"
            #expect(try await matcher.deliveries(of: foreign, to: subscribers).isEmpty)
            var config = SubscriptionFixture.change(seq + 2, "Note", ["id": "x", "owner": "alice"], version: 1)
            config.kind = "config"
            #expect(try await matcher.deliveries(of: config, to: subscribers).isEmpty)
        }
    }

    @Test(arguments: TestBackend.available)
    func filterArgumentsChooseTheRecords(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            let fixture = try await SubscriptionFixture.make(database)
            let matcher = SubscriptionMatcher(runtime: fixture.runtime)
            let alice = SubscriptionFixture.alice
            let subscribers = [
                try await Self.subscriber(
                    "urgent", alice, #"subscription { onCreateNote(filter: {text: {beginsWith: "urgent"}}) { id } }"#, on: fixture),
                try await Self.subscriber(
                    "notMilk", alice, #"subscription { onCreateNote(filter: {not: {text: {contains: "milk"}}}) { id } }"#, on: fixture),
                try await Self.subscriber(
                    "early", alice, #"subscription { onCreateNote(filter: {createdAt: {lt: "1970-01-01T00:00:02Z"}}) { id } }"#, on: fixture),
                try await Self.subscriber("all", alice, "subscription { onCreateNote { id } }", on: fixture),
            ]
            let notes: [(text: JSONValue, createdAt: JSONValue)] = [
                ("urgent: milk", 1_000), ("Urgent: bread", 1_500), ("bread", 5_000), (.null, 1_999), ("urgent", 2_000),
            ]
            var received: [String: [String]] = [:]
            for (index, note) in notes.enumerated() {
                let record: [String: JSONValue] = ["id": .string("n\(index)"), "text": note.text, "owner": "alice", "createdAt": note.createdAt]
                let change = SubscriptionFixture.change(Int64(index + 1), "Note", record, version: 1)
                for delivery in try await matcher.deliveries(of: change, to: subscribers) {
                    received[delivery.key, default: []].append("n\(index)")
                }
            }
            #expect(received["urgent"] == ["n0", "n4"], "case-sensitive, as the list filter")
            #expect(received["notMilk"] == ["n1", "n2", "n3", "n4"], "a note without text does not contain milk")
            #expect(received["early"] == ["n0", "n1", "n3"])
            #expect(received["all"] == ["n0", "n1", "n2", "n3", "n4"])
        }
    }

    /// A message is readable by its room's members as they are now: a member added starts receiving the room's
    /// messages, one removed stops, and the room is read once per change, not once per subscriber.
    @Test(arguments: TestBackend.available)
    func aViaRuleFollowsTheRoomsMembersAsTheyAreNow(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            let fixture = try await SubscriptionFixture.make(database)
            try await fixture.chat.insert([
                .init(model: "Room", fields: ["id": "r1", "name": "Lobby", "members": ["alice"]]),
                .init(model: "Room", fields: ["id": "r2", "name": "Gone", "members": ["alice", "bob"]], deleted: true),
            ])
            let loads = CallCounter()
            let authorization = fixture.runtime.authorization
            let matcher = SubscriptionMatcher(runtime: fixture.runtime) { model, record in
                await loads.add()
                return try await authorization.relatedRecords(of: model, record: record, for: .read, on: database)
            }
            let query = "subscription { onCreateMessage { id text room { name } } }"
            let subscribers = [
                try await Self.subscriber("alice", SubscriptionFixture.alice, query, on: fixture),
                try await Self.subscriber("bob", SubscriptionFixture.bob, query, on: fixture),
                try await Self.subscriber("carol", SubscriptionFixture.carol, query, on: fixture),
                try await Self.subscriber("dave", SubscriptionFixture.dave, query, on: fixture),
            ]
            func send(_ seq: Int64, room: String) async throws -> [String] {
                // Dave writes every message: his owner rule lets him read them all, whatever the room says.
                let record: [String: JSONValue] = ["id": .string("m\(seq)"), "roomId": .string(room), "text": "hi", "owner": "dave"]
                let deliveries = try await matcher.deliveries(of: SubscriptionFixture.change(seq, "Message", record, version: 1), to: subscribers)
                for delivery in deliveries where delivery.key != "dave" {
                    #expect(delivery.payload["data"]?["onCreateMessage"]?["room"]?["name"] == "Lobby", "\(delivery.payload)")
                }
                return deliveries.map(\.key)
            }
            #expect(try await send(1, room: "r1") == ["alice", "dave"])
            try await fixture.chat.setMembers(of: "r1", to: ["alice", "bob"])
            #expect(try await send(2, room: "r1") == ["alice", "bob", "dave"])
            try await fixture.chat.setMembers(of: "r1", to: ["bob"])
            #expect(try await send(3, room: "r1") == ["bob", "dave"])
            // A deleted room, or none, lets no member in.
            #expect(try await send(4, room: "r2") == ["dave"])
            #expect(try await send(5, room: "nowhere") == ["dave"])
            #expect(await loads.count == 5)
        }
    }

    /// The decision reads the related records it is given: a matcher tested with no store behind its rules.
    @Test func theRelatedRecordsComeFromTheLoaderGiven() async throws {
        try await withMigratedStore(.sqlite) { database, _ in
            let fixture = try await SubscriptionFixture.make(database)
            let matcher = SubscriptionMatcher(runtime: fixture.runtime) { _, record in
                ["room": ["id": record["roomId"] ?? .null, "members": ["carol"]]]
            }
            let subscribers = [
                try await Self.subscriber("alice", SubscriptionFixture.alice, "subscription { onCreateMessage { id } }", on: fixture),
                try await Self.subscriber("carol", SubscriptionFixture.carol, "subscription { onCreateMessage { id } }", on: fixture),
            ]
            let change = SubscriptionFixture.change(1, "Message", ["id": "m1", "roomId": "r9", "text": "hi", "owner": "dave"], version: 1)
            #expect(try await matcher.deliveries(of: change, to: subscribers).map(\.key) == ["carol"])
        }
    }

    @Test(arguments: TestBackend.available)
    func deletedChangesGoToOnDeleteOnly(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            let fixture = try await SubscriptionFixture.make(database)
            let matcher = SubscriptionMatcher(runtime: fixture.runtime)
            let alice = SubscriptionFixture.alice
            var subscribers: [Subscriber] = []
            for kind in ["Create", "Update", "Delete"] {
                subscribers.append(
                    try await Self.subscriber(kind, alice, "subscription { on\(kind)Note { id text _version _deleted } }", on: fixture))
            }
            let record: [String: JSONValue] = ["id": "n1", "text": "milk", "owner": "alice"]
            var received: [[String]] = []
            var deletedPayload: JSONValue?
            for (seq, version) in [(Int64(1), Int64(1)), (2, 2), (3, 3), (4, 4)] {
                let change = SubscriptionFixture.change(seq, "Note", record, version: version, deleted: version == 3)
                let deliveries = try await matcher.deliveries(of: change, to: subscribers)
                received.append(deliveries.map(\.key))
                if version == 3 { deletedPayload = deliveries.first?.payload }
            }
            // Create, update, delete; a later version not deleted is an update (a tombstone is never changed again
            // through the API, but the decision reads the change, not the history).
            #expect(received == [["Create"], ["Update"], ["Delete"], ["Update"]])
            let tombstone = deletedPayload?["data"]?["onDeleteNote"]
            #expect(tombstone?["_deleted"] == true && tombstone?["_version"] == 3 && tombstone?["text"] == "milk")
            #expect(deletedPayload?["extensions"]?["seq"] == "3" && deletedPayload?["errors"] == nil)
        }
    }
}
