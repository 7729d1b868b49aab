import GraphQL
import KizunaCore
import Testing

@testable import KizunaServer

/// Relation fields (`@belongsTo`, `@hasMany`) on both engines: one statement per relation field and level whatever
/// the number of parent rows, counted; fragments, aliases and directives read as the executor reads them; a page and
/// a `nextToken` per parent; the rules of the related model applied to every related record.
@Suite("Relations")
struct RelationTests {
    static let alice = DataCaller(userId: "alice")
    static let bob = DataCaller(userId: "bob")

    /// Ten rooms of alice and bob, each with two messages of alice's, one of bob's and a deleted one of alice's;
    /// `hidden`, bob's room, holds a message of alice's; `gone` is a deleted room of alice's with one of hers. Only
    /// r0-a1 has a flag, a model nobody may read.
    static func withRooms(_ backend: TestBackend, _ body: (RelationFixture) async throws -> Void) async throws {
        try await withMigratedStore(backend) { database, _ in
            let fixture = try await RelationFixture.make(database)
            try await fixture.flag("f1", label: "spam")
            for index in 0..<10 {
                let room = "r\(index)"
                let at = 2_000 + 10 * Int64(index)
                try await fixture.room(room, name: "room \(index)", members: ["alice", "bob"], at: 1_000 + Int64(index))
                try await fixture.message("\(room)-a1", room: room, owner: "alice", text: "text of \(room)-a1", at: at, flag: index == 0 ? "f1" : nil)
                try await fixture.message("\(room)-b1", room: room, owner: "bob", text: "text of \(room)-b1", at: at + 1)
                try await fixture.message("\(room)-a2", room: room, owner: "alice", text: "text of \(room)-a2", at: at + 2)
                try await fixture.message("\(room)-a3", room: room, owner: "alice", text: "text of \(room)-a3", at: at + 3, deleted: true)
            }
            try await fixture.room("hidden", name: "bob's", members: ["bob"], at: 1_100)
            try await fixture.message("hidden-a1", room: "hidden", owner: "alice", text: "in bob's room", at: 3_000)
            try await fixture.room("gone", name: "gone", members: ["alice"], at: 1_101, deleted: true)
            try await fixture.message("gone-a1", room: "gone", owner: "alice", text: "in a deleted room", at: 3_001)
            try await body(fixture)
        }
    }

    static func ids(_ connection: JSONValue?) -> [String] {
        (connection?["items"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue }
    }

    @Test(arguments: TestBackend.available)
    func eachLevelCostsOneStatementWhateverTheNumberOfRows(_ backend: TestBackend) async throws {
        try await Self.withRooms(backend) { fixture in
            let plain = try await fixture.run("{ listRooms { items { id } } }", as: Self.alice)
            #expect(plain.statements == 1, "a query without relations runs no more than it did")

            for limit in [3, 10] {
                let query = "{ listRooms(limit: \(limit)) { items { id messages { items { id text room { name } } nextToken } } } }"
                let answer = try await fixture.run(query, as: Self.alice)
                #expect(answer.problems == [])
                #expect(answer.statements == 3, "rooms, then all their messages, then all the messages' rooms; \(limit) rooms")
                let rooms = answer.data["listRooms"]?["items"]?.arrayValue ?? []
                #expect(rooms.count == limit)
                for room in rooms {
                    let id = room["id"]?.stringValue ?? ""
                    let messages = room["messages"]?["items"]?.arrayValue ?? []
                    let names = messages.compactMap { $0["room"]?["name"]?.stringValue }
                    let texts = messages.compactMap { $0["text"]?.stringValue }
                    let expectedName = "room \(id.dropFirst())"
                    // Bob's message (another owner's) and alice's deleted one never appear.
                    #expect(Self.ids(room["messages"]) == ["\(id)-a1", "\(id)-a2"])
                    #expect(texts == ["text of \(id)-a1", "text of \(id)-a2"])
                    #expect(names == [expectedName, expectedName])
                    #expect(room["messages"]?["nextToken"] == .null)
                }
            }
        }
    }

    @Test(arguments: TestBackend.available)
    func selectionsAreReadAsTheExecutorReadsThem(_ backend: TestBackend) async throws {
        try await Self.withRooms(backend) { fixture in
            // Fragments, inline fragments, aliases, @include with a variable and @skip: two relation fields are selected.
            let ends = """
                query($show: Boolean!) { getRoom(id: "r1") { ...Ends } }
                fragment Ends on Room {
                  first: messages(limit: 1) { items { id } nextToken }
                  ... on Room { last: messages(limit: 1, sortDirection: DESC) { items { id } } }
                  shown: messages @include(if: $show) { items { id } }
                  skipped: messages @skip(if: true) { items { id } }
                }
                """
            let answer = try await fixture.run(ends, as: Self.alice, variables: ["show": false])
            #expect(answer.problems == [])
            #expect(answer.statements == 3)
            let room = answer.data["getRoom"]
            #expect(Self.ids(room?["first"]) == ["r1-a1"])
            #expect(room?["first"]?["nextToken"]?.stringValue != nil)
            #expect(Self.ids(room?["last"]) == ["r1-a2"])
            #expect(room?["shown"] == nil && room?["skipped"] == nil)

            // The same records under two aliases of items, asking the same relation the same way: loaded once.
            let agreeing = """
                { listRooms(limit: 2) { a: items { id m: messages(limit: 1) { items { id } } } b: items { m: messages(limit: 1) { items { text } } } } }
                """
            let agreed = try await fixture.run(agreeing, as: Self.alice)
            #expect(agreed.problems == [])
            #expect(agreed.statements == 2)
            let aItems = agreed.data["listRooms"]?["a"]?.arrayValue ?? []
            let bItems = agreed.data["listRooms"]?["b"]?.arrayValue ?? []
            #expect(aItems.count == 2 && bItems.count == 2)
            #expect(Self.ids(aItems.first?["m"]) == ["r0-a1"])
            #expect(bItems.first?["m"]?["items"] == [["text": "text of r0-a1"]])

            // Two ways under one name: each room's resolver loads its own (a batch of one each), and both are right.
            let differing = """
                { listRooms(limit: 2) { a: items { m: messages(limit: 1) { items { id } } } b: items { m: messages(limit: 2) { items { id } } } } }
                """
            let differed = try await fixture.run(differing, as: Self.alice)
            #expect(differed.problems == [])
            #expect(differed.statements == 5, "the rooms, then one statement per room for each of the two selections")
            let aRooms = differed.data["listRooms"]?["a"]?.arrayValue ?? []
            let bRooms = differed.data["listRooms"]?["b"]?.arrayValue ?? []
            #expect(aRooms.count == 2 && bRooms.count == 2)
            #expect(Self.ids(aRooms.last?["m"]) == ["r1-a1"])
            #expect(Self.ids(bRooms.last?["m"]) == ["r1-a1", "r1-a2"])
        }
    }

    @Test(arguments: TestBackend.available)
    func eachParentHasItsOwnPageAndNextToken(_ backend: TestBackend) async throws {
        try await Self.withRooms(backend) { fixture in
            let firsts = try await fixture.run(
                "{ listRooms(limit: 3) { items { id messages(limit: 1) { items { id } nextToken } } } }", as: Self.alice)
            #expect(firsts.problems == [])
            #expect(firsts.statements == 2)
            let rooms = firsts.data["listRooms"]?["items"]?.arrayValue ?? []
            #expect(rooms.count == 3)
            for room in rooms {
                let id = room["id"]?.stringValue ?? ""
                #expect(Self.ids(room["messages"]) == ["\(id)-a1"])
                #expect(room["messages"]?["nextToken"]?.stringValue != nil)
            }

            // One room's token pages that room's messages, however many rooms were listed with it.
            let page = "query($token: String) { getRoom(id: \"r2\") { messages(limit: 1, nextToken: $token) { items { id } nextToken } } }"
            var token = Map.string(try #require(rooms.last?["messages"]?["nextToken"]?.stringValue))
            var pages: [[String]] = []
            repeat {
                let answer = try await fixture.run(page, as: Self.alice, variables: ["token": token])
                #expect(answer.problems == [] && answer.statements == 2)
                pages.append(Self.ids(answer.data["getRoom"]?["messages"]))
                token = answer.data["getRoom"]?["messages"]?["nextToken"]?.stringValue.map { Map.string($0) } ?? .null
            } while token != .null && pages.count < 5
            #expect(pages == [["r2-a2"]])

            // A token of another list is refused for this one: the relation is part of its scope.
            let listed = try await fixture.run("{ listMessages(limit: 1) { nextToken } }", as: Self.alice)
            let foreign = Map.string(try #require(listed.data["listMessages"]?["nextToken"]?.stringValue))
            let refused = try await fixture.run(page, as: Self.alice, variables: ["token": foreign])
            #expect(refused.problems == ["bad_cursor at getRoom.messages"])

            // A filter on the related records, noted when no index leads with its fields.
            let filtered = try await fixture.run(
                #"{ getRoom(id: "r0") { messages(filter: { text: { eq: "text of r0-a2" } }) { items { id } } } }"#, as: Self.alice)
            #expect(Self.ids(filtered.data["getRoom"]?["messages"]) == ["r0-a2"])
            #expect(filtered.extensions?["unindexedFilter"]?["Message"] == ["text"])
        }
    }

    @Test(arguments: TestBackend.available)
    func theRelatedModelsRulesDecideWhatIsReturned(_ backend: TestBackend) async throws {
        try await Self.withRooms(backend) { fixture in
            // Bob sees his own messages in shared rooms, and none of alice's in his own room.
            let bobs = try await fixture.run("{ listRooms { items { id messages { items { id } } } } }", as: Self.bob)
            let rooms = bobs.data["listRooms"]?["items"]?.arrayValue ?? []
            let roomIds = rooms.compactMap { $0["id"]?.stringValue }
            #expect(roomIds == ["r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9", "hidden"])
            for room in rooms {
                let id = room["id"]?.stringValue ?? ""
                #expect(Self.ids(room["messages"]) == (id == "hidden" ? [] : ["\(id)-b1"]))
            }

            // A room alice may not read, and a deleted one, are null, exactly as getRoom would answer.
            for id in ["hidden-a1", "gone-a1"] {
                let answer = try await fixture.run(#"{ getMessage(id: "\#(id)") { id room { name } } }"#, as: Self.alice)
                #expect(answer.problems == [])
                #expect(answer.data["getMessage"]?["id"]?.stringValue == id)
                #expect(answer.data["getMessage"]?["room"] == .null)
            }
            let back = try await fixture.run(#"{ getMessage(id: "r3-a2") { room { name messages { items { id } } } } }"#, as: Self.alice)
            #expect(back.statements == 3)
            #expect(back.data["getMessage"]?["room"]?["name"] == "room 3")
            #expect(Self.ids(back.data["getMessage"]?["room"]?["messages"]) == ["r3-a1", "r3-a2"])

            // Nobody may read flags: the one message with a flag gets the field's error, the list and the others stand.
            let flags = try await fixture.run("{ listMessages { items { id flag { label } } } }", as: Self.alice)
            #expect(flags.problems == ["forbidden at listMessages.items.0.flag"])
            #expect(flags.statements == 1)
            let messages = flags.data["listMessages"]?["items"]?.arrayValue ?? []
            #expect(messages.count == 22)
            #expect(messages.first?["id"] == "r0-a1" && messages.first?["flag"] == .null)
        }
    }
}
