import KizunaCore
import SQLKit
import Testing

@testable import KizunaServer

/// The access rules decided on both engines: a matrix of callers, models and operations through the SQL condition,
/// creates through `mayCreate`, and the in-memory decision for realtime deliveries agreeing with SQL on every record.
@Suite("Data authorization")
struct DataAuthorizationTests {
    /// A user id that must be bound and JSON-escaped, never spliced into SQL.
    static let quotedId = #"o'neil "q" \ %"#

    /// Every caller the matrix covers, by name.
    static let callers: [String: DataCaller] = [
        "alice": DataCaller(userId: "alice"),
        "bob": DataCaller(userId: "bob"),
        "carol": DataCaller(userId: "carol"),
        "dave": DataCaller(userId: "dave"),
        "quoted": DataCaller(userId: quotedId),
        "moderator": DataCaller(userId: "mia", groups: ["moderators"]),
        "admin": DataCaller(userId: "ada", groups: ["admins"]),
        "apiKey": DataCaller(hasAPIKey: true),
        "anonymous": .anonymous,
        // Groups belong to users: a caller without a session claiming them is still nobody.
        "groupsWithoutUser": DataCaller(groups: ["moderators", "admins"]),
    ]

    /// The rows: alice and bob share r1, bob and the quoted user r2, r3 is deleted, r4 has no members, and r5's
    /// members are near misses of alice. m6 has no owner (written with an admin token), m5's room does not exist.
    static let rows: [ChatFixture.Row] = [
        .init(model: "Room", fields: ["id": "r1", "name": "general", "members": ["alice", "bob"]]),
        .init(model: "Room", fields: ["id": "r2", "name": "bob's", "members": ["bob", .string(quotedId)]]),
        .init(model: "Room", fields: ["id": "r3", "name": "closed", "members": ["alice"]], deleted: true),
        .init(model: "Room", fields: ["id": "r4", "name": "empty"]),
        .init(model: "Room", fields: ["id": "r5", "name": "near misses", "members": ["ali", "alice2", "ALICE", "%"]]),
        .init(model: "Message", fields: ["id": "m1", "roomId": "r1", "text": "hi", "owner": "alice"]),
        .init(model: "Message", fields: ["id": "m2", "roomId": "r1", "text": "hello", "owner": "bob"]),
        .init(model: "Message", fields: ["id": "m3", "roomId": "r2", "text": "mine", "owner": "bob"]),
        .init(model: "Message", fields: ["id": "m4", "roomId": "r3", "text": "in a deleted room", "owner": "bob"]),
        .init(model: "Message", fields: ["id": "m5", "roomId": "gone", "text": "orphan", "owner": "carol"]),
        .init(model: "Message", fields: ["id": "m6", "roomId": "r1", "text": "from an admin token"]),
        .init(model: "Note", fields: ["id": "n1", "text": "a", "owner": "alice"]),
        .init(model: "Note", fields: ["id": "n2", "text": "c", "owner": "carol"]),
        .init(model: "Note", fields: ["id": "n3", "text": "nobody's"]),
        .init(model: "Notice", fields: ["id": "x1", "text": "welcome"]),
        .init(model: "Notice", fields: ["id": "x2", "text": "maintenance"]),
        .init(model: "Secret", fields: ["id": "s1", "text": "42"]),
    ]

    static let models = ["Room", "Message", "Note", "Notice", "Secret"]

    /// Runs `body` with the chat rows in a fresh store of `backend`.
    static func withChat(_ backend: TestBackend, _ body: (ChatFixture) async throws -> Void) async throws {
        try await withMigratedStore(backend) { database, _ in
            let chat = try await ChatFixture.make(database)
            try await chat.insert(Self.rows)
            try await body(chat)
        }
    }

    @Test func theMatrixCoversEveryCallerModelAndOperationOnce() {
        var covered: [String] = []
        for entry in Self.cases {
            covered += entry.operations.map { "\(entry.caller) \(entry.model) \($0)" }
        }
        var expected: [String] = []
        for caller in Self.callers.keys {
            for model in Self.models {
                expected += Self.everyOperation.map { "\(caller) \(model) \($0)" }
            }
        }
        #expect(covered.sorted() == expected.sorted())
    }

    @Test(arguments: TestBackend.available)
    func eachCallerReadsUpdatesAndDeletesExactlyItsRows(_ backend: TestBackend) async throws {
        try await Self.withChat(backend) { chat in
            for entry in Self.cases {
                let caller = try #require(Self.callers[entry.caller])
                for operation in entry.operations {
                    let ids = try await chat.ids(operation, entry.model, for: caller)
                    #expect(ids == entry.ids, "\(entry.caller) \(operation) \(entry.model)")
                }
            }
        }
    }

    @Test(arguments: TestBackend.available)
    func createsFollowTheRulesThatAllowCreate(_ backend: TestBackend) async throws {
        try await Self.withChat(backend) { chat in
            let creates: [Create] = [
                Create("alice", "Room", ["id": "new", "members": ["alice", "bob"]], true),
                Create("alice", "Room", ["id": "new", "members": ["bob"]], false),
                Create("alice", "Room", ["id": "new"], false),
                Create("moderator", "Room", ["id": "new", "members": ["bob"]], true),
                Create("apiKey", "Room", ["id": "new", "members": []], false),
                Create("anonymous", "Room", ["id": "new", "members": []], false),
                Create("groupsWithoutUser", "Room", ["id": "new"], false),

                Create("alice", "Message", ["id": "new", "roomId": "r1"], true),
                Create("bob", "Message", ["id": "new", "roomId": "r2"], true),
                Create("quoted", "Message", ["id": "new", "roomId": "r2"], true),
                Create("alice", "Message", ["id": "new", "roomId": "r2"], false),
                Create("alice", "Message", ["id": "new", "roomId": "r3"], false),  // the room is deleted
                Create("carol", "Message", ["id": "new", "roomId": "gone"], false),
                Create("carol", "Message", ["id": "new", "roomId": "r1"], false),
                Create("dave", "Message", ["id": "new", "roomId": "r1"], false),
                Create("moderator", "Message", ["id": "new", "roomId": "r1"], false),
                Create("apiKey", "Message", ["id": "new", "roomId": "r1"], false),
                Create("anonymous", "Message", ["id": "new", "roomId": "r1"], false),

                Create("alice", "Note", ["id": "new"], true),
                Create("carol", "Note", ["id": "new"], true),
                Create("apiKey", "Note", ["id": "new"], false),
                Create("anonymous", "Note", ["id": "new"], false),

                Create("admin", "Notice", ["id": "new"], true),
                Create("alice", "Notice", ["id": "new"], false),
                Create("moderator", "Notice", ["id": "new"], false),
                Create("apiKey", "Notice", ["id": "new"], false),
            ]
            for create in creates {
                let caller = try #require(Self.callers[create.caller])
                let record = try Self.filled(create.input, model: chat.model(create.model), by: caller, chat: chat)
                let decided = try await chat.mayCreate(create.model, record, for: caller)
                #expect(decided == create.allowed, "\(create.caller) creates \(create.model) \(create.input)")
            }
            for (name, caller) in Self.callers {
                let record = try Self.filled(["id": "new"], model: chat.model("Secret"), by: caller, chat: chat)
                let decided = try await chat.mayCreate("Secret", record, for: caller)
                #expect(!decided, "\(name) creates a Secret")
            }
            // An owner field the server did not fill from the session, as a forging client would send it.
            let alice = try #require(Self.callers["alice"])
            let forged = try await chat.mayCreate("Note", ["id": "new", "owner": "carol"], for: alice)
            #expect(!forged)
        }
    }

    /// One create: who, what model, the input before the server fills the owner fields, and whether it is allowed.
    struct Create: Sendable {
        var caller: String
        var model: String
        var input: [String: JSONValue]
        var allowed: Bool

        init(_ caller: String, _ model: String, _ input: [String: JSONValue], _ allowed: Bool) {
            self.caller = caller
            self.model = model
            self.input = input
            self.allowed = allowed
        }
    }

    /// `input` with the owner fields filled from the caller's session, as the API fills them before `mayCreate`.
    static func filled(_ input: [String: JSONValue], model: DataModel, by caller: DataCaller, chat: ChatFixture) -> [String: JSONValue] {
        var record = input
        for field in chat.authorization.ownerFields(of: model) {
            record[field] = caller.userId.map { JSONValue.string($0) } ?? .null
        }
        return record
    }

    @Test(arguments: TestBackend.available)
    func theInMemoryDecisionAgreesWithSQLOnEveryRecord(_ backend: TestBackend) async throws {
        try await Self.withChat(backend) { chat in
            try await Self.expectAgreement(chat, rows: Self.rows)
            // Membership changes move both sides together: a message's room is read again, as a delivery would.
            try await chat.setMembers(of: "r1", to: ["dave"])
            try await chat.setMembers(of: "r2", to: [])
            let changed = Self.rows.map { row in
                var row = row
                if row.fields["id"]?.stringValue == "r1" { row.fields["members"] = ["dave"] }
                if row.fields["id"]?.stringValue == "r2" { row.fields["members"] = [] }
                return row
            }
            try await Self.expectAgreement(chat, rows: changed)
        }
    }

    /// For every record, caller and operation: the record's id is in the SQL result iff the in-memory decision,
    /// given the related records loaded once, lets the caller in.
    static func expectAgreement(_ chat: ChatFixture, rows: [ChatFixture.Row]) async throws {
        for operation in everyOperation {
            var sql: [String: Set<String>] = [:]
            for (name, caller) in callers {
                var visible: Set<String> = []
                for model in models {
                    let ids = try await chat.ids(operation, model, for: caller)
                    visible.formUnion(ids ?? [])
                }
                sql[name] = visible
            }
            for row in rows {
                // Loaded once per record, as a delivery loads them once per change, then decided for every caller.
                let model = try chat.model(row.model)
                let related = try await chat.authorization.relatedRecords(of: model, record: row.fields, for: operation, on: chat.database)
                let id = try #require(row.fields["id"]?.stringValue)
                for (name, caller) in callers {
                    let inMemory = chat.authorization.allows(operation, on: model, record: row.fields, related: related, for: caller)
                    let inSQL = sql[name]?.contains(id) ?? false
                    #expect(inSQL == inMemory, "\(name) \(operation) \(id)")
                    if operation == .read {
                        let delivered = chat.authorization.mayRead(model, record: row.fields, related: related, for: caller)
                        #expect(delivered == inMemory)
                    }
                }
            }
        }
    }

    @Test(arguments: TestBackend.available)
    func aMemberAddedLaterReadsTheRoomsWholeHistoryAndARemovedOneOnlyTheirOwn(_ backend: TestBackend) async throws {
        try await Self.withChat(backend) { chat in
            let dave = try #require(Self.callers["dave"])
            let bob = try #require(Self.callers["bob"])
            let before = try await chat.ids(.read, "Message", for: dave)
            #expect(before == [])

            try await chat.setMembers(of: "r1", to: ["alice", "dave"])
            let after = try await chat.ids(.read, "Message", for: dave)
            #expect(after == ["m1", "m2", "m6"])
            let rooms = try await chat.ids(.read, "Room", for: dave)
            #expect(rooms == ["r1"])
            let mayPost = try await chat.mayCreate("Message", ["id": "new", "roomId": "r1", "owner": "dave"], for: dave)
            #expect(mayPost)
            // Reading is not editing: the room's rule allows read and create only.
            let editable = try await chat.ids(.update, "Message", for: dave)
            #expect(editable == [])

            // bob left r1: he keeps his own message there, through the owner rule.
            let bobReads = try await chat.ids(.read, "Message", for: bob)
            #expect(bobReads == ["m2", "m3", "m4"])
        }
    }

    @Test(arguments: TestBackend.available)
    func theConditionNarrowsAKeysetPage(_ backend: TestBackend) async throws {
        try await Self.withChat(backend) { chat in
            let model = try chat.model("Message")
            let alice = try #require(Self.callers["alice"])
            guard case .rows(let condition) = chat.authorization.access(.read, on: model, for: alice) else {
                Issue.record("alice's read of messages is a row condition")
                return
            }
            let page = try KeysetPage(
                model: model, schema: chat.schema, table: chat.table("Message"), dialect: chat.dialect, limit: 2, filter: condition, scope: "")
            let (rows, next) = try await page.run(on: chat.database)
            let ids = try rows.map { try $0.decode(column: "id", as: String.self) }
            #expect(ids == ["m1", "m2"])
            #expect(next != nil)
        }
    }

    @Test func callerOnlyRulesNeedNoRowCheck() throws {
        let schema = try DataSchema(sdl: ChatFixture.sdl)
        let authorization = DataAuthorization(schema: schema, app: ChatFixture.app, dialect: .sqlite)
        let room = try #require(schema.model(named: "Room"))
        let message = try #require(schema.model(named: "Message"))
        let notice = try #require(schema.model(named: "Notice"))
        let note = try #require(schema.model(named: "Note"))
        let relation = try #require(message.relation(named: "room"))

        #expect(authorization.grant(.read, on: room, for: DataCaller(userId: "mia", groups: ["moderators"])) == .all)
        #expect(
            authorization.grant(.read, on: room, for: DataCaller(userId: "alice"))
                == .rows([RowCheck(field: "members", isList: true, userId: "alice")]))
        #expect(
            authorization.grant(.read, on: message, for: DataCaller(userId: "alice"))
                == .rows([
                    RowCheck(field: "members", isList: true, userId: "alice", via: relation),
                    RowCheck(field: "owner", isList: false, userId: "alice"),
                ]))
        #expect(
            authorization.grant(.create, on: message, for: DataCaller(userId: "alice"))
                == .rows([RowCheck(field: "members", isList: true, userId: "alice", via: relation)]))
        // public is the API key's: a session alone does not meet it, but private does, and a key with a session meets both.
        #expect(authorization.grant(.read, on: notice, for: DataCaller(hasAPIKey: true)) == .all)
        #expect(authorization.grant(.read, on: notice, for: DataCaller(userId: "alice")) == .all)
        #expect(authorization.grant(.update, on: notice, for: DataCaller(userId: "alice", hasAPIKey: true)) == .denied)
        #expect(
            authorization.grant(.read, on: note, for: DataCaller(userId: "alice", hasAPIKey: true))
                == .rows([RowCheck(field: "owner", isList: false, userId: "alice")]))

        #expect(authorization.ownerFields(of: message) == ["owner"])
        #expect(authorization.ownerFields(of: note) == ["owner"])
        #expect(authorization.ownerFields(of: room) == [])
        #expect(authorization.ownerFields(of: notice) == [])
        let readVia = authorization.viaFields(of: message, for: .read).map { $0.relation }
        #expect(readVia == [relation])
        #expect(authorization.viaFields(of: message, for: .update).isEmpty)
    }

    @Test func anOperatorPassesEveryRule() throws {
        let schema = try DataSchema(sdl: ChatFixture.sdl)
        let authorization = DataAuthorization(schema: schema, app: ChatFixture.app, dialect: .sqlite)
        let operatorCaller = DataCaller(isOperator: true)
        // Secret has no rules: closed to every other caller, open to the operator like every other model.
        for model in schema.models {
            for operation in DataOperation.allCases {
                #expect(authorization.grant(operation, on: model, for: operatorCaller) == .all, "\(model.name) \(operation)")
                #expect(authorization.allows(operation, on: model, record: ["id": "x"], related: [:], for: operatorCaller))
            }
        }
        let secret = try #require(schema.model(named: "Secret"))
        #expect(authorization.grant(.read, on: secret, for: DataCaller(userId: "ada", groups: ["admins"], hasAPIKey: true)) == .denied)
    }

    @Test func aStaleOrDeletedRelatedRecordLetsNobodyIn() throws {
        let schema = try DataSchema(sdl: ChatFixture.sdl)
        let authorization = DataAuthorization(schema: schema, app: ChatFixture.app, dialect: .postgres)
        let message = try #require(schema.model(named: "Message"))
        let alice = DataCaller(userId: "alice")
        let record: [String: JSONValue] = ["id": "m", "roomId": "r2", "owner": "bob"]

        let current = authorization.mayRead(message, record: record, related: ["room": ["id": "r2", "members": ["alice"]]], for: alice)
        #expect(current)
        // The message moved out of r1: r1's members no longer count.
        let stale = authorization.mayRead(message, record: record, related: ["room": ["id": "r1", "members": ["alice"]]], for: alice)
        #expect(!stale)
        let deleted = authorization.mayRead(
            message, record: record, related: ["room": ["id": "r2", "members": ["alice"], "_deleted": true]], for: alice)
        #expect(!deleted)
        let missing = authorization.mayRead(message, record: record, related: [:], for: alice)
        #expect(!missing)
        // A members list is a list: the id as a plain string is not membership.
        let notAList = authorization.mayRead(message, record: record, related: ["room": ["id": "r2", "members": "alice"]], for: alice)
        #expect(!notAList)
    }
}
