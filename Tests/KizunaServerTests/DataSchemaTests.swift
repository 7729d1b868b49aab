import Foundation
import KizunaCore
import Testing

@testable import KizunaServer

/// The data schema read from SDL: every supported construct, Amplify's spellings, and every problem reported at once
/// with its line and column.
@Suite("Data schema")
struct DataSchemaTests {
    /// A chat app's schema using every construct: an enum, relations both ways, an index sorted by `createdAt`, a
    /// default, and each kind of access rule.
    static let chat = #"""
        enum MessageKind {
          TEXT
          IMAGE
        }

        type Room @model @auth(rules: [
          {allow: owners, ownerField: "members"},
          {allow: groups, groups: ["admins"]},
          {allow: private, operations: [read]}
        ]) {
          name: String!
          members: [String]
          messages: [Message] @hasMany(references: ["roomId"])
        }

        "A message in a room."
        type Message @model @auth(rules: [
          {allow: owner},
          {allow: owners, ownerField: "members", via: "room", operations: [read, create]},
          {allow: public, operations: [get, list]}
        ]) {
          roomId: ID! @index(name: "byRoom", sortKeyFields: ["createdAt"])
          room: Room @belongsTo(references: ["roomId"])
          text: String!
          kind: MessageKind! @default(value: "TEXT")
          editedAt: DateTime
        }
        """#

    @Test func theChatSchemaParsesIntoItsModels() throws {
        let schema = try DataSchema(sdl: Self.chat)
        #expect(schema.enums == [DataEnum(name: "MessageKind", values: ["TEXT", "IMAGE"])])
        #expect(schema.models.map(\.name) == ["Room", "Message"])

        let room = try #require(schema.model(named: "Room"))
        #expect(
            room.fields == [
                .id,
                DataField(name: "name", type: .scalar(.string), isRequired: true),
                DataField(name: "members", type: .scalar(.string), isList: true),
                .createdAt, .updatedAt, .version,
            ])
        #expect(room.indexes.isEmpty)
        #expect(room.relations == [DataRelation(field: "messages", kind: .hasMany, target: "Message", references: "roomId")])
        #expect(
            room.rules == [
                AuthRule(allow: .owners(field: "members")),
                AuthRule(allow: .groups(["admins"])),
                AuthRule(allow: .signedIn, operations: [.read]),
            ])

        let message = try #require(schema.model(named: "Message"))
        #expect(
            message.fields == [
                .id,
                DataField(name: "roomId", type: .scalar(.id), isRequired: true),
                DataField(name: "text", type: .scalar(.string), isRequired: true),
                DataField(name: "kind", type: .enumeration("MessageKind"), isRequired: true, defaultValue: "TEXT"),
                DataField(name: "editedAt", type: .scalar(.dateTime)),
                .createdAt, .updatedAt, .owner, .version,
            ])
        #expect(message.indexes == [DataIndex(name: "byRoom", partitionKey: "roomId", sortKeys: ["createdAt"])])
        #expect(message.relations == [DataRelation(field: "room", kind: .belongsTo, target: "Room", references: "roomId")])
        #expect(
            message.rules == [
                AuthRule(allow: .owner(field: "owner")),
                AuthRule(allow: .owners(field: "members"), operations: [.read, .create], via: "room"),
                AuthRule(allow: .anyone, operations: [.read]),
            ])
        #expect(message.field(named: "room") == nil, "a relation field is not a column")
        #expect(message.field(named: "owner")?.isAutomatic == true)
    }

    /// Amplify schemas declare `id`, the timestamps, `AWS*` scalars and `allow: owner` over a list; they publish as
    /// they are and mean the same as the plain spelling.
    @Test func anAmplifySchemaPublishesAsItIs() throws {
        let amplify = try DataSchema(
            sdl: """
                type Todo @model @auth(rules: [{allow: owner, ownerField: "members"}]) {
                  id: ID!
                  title: String!
                  members: [String]
                  meta: AWSJSON
                  due: AWSDateTime
                  createdAt: AWSDateTime!
                  updatedAt: AWSDateTime
                }
                """)
        let plain = try DataSchema(
            sdl: """
                type Todo @model @auth(rules: [{allow: owners, ownerField: "members"}]) {
                  title: String!
                  members: [String]
                  meta: JSON
                  due: DateTime
                }
                """)
        #expect(amplify == plain)
        let todo = try #require(amplify.model(named: "Todo"))
        #expect(todo.fields.map(\.name) == ["id", "title", "members", "meta", "due", "createdAt", "updatedAt", "_version"])
        #expect(todo.fields.filter(\.isAutomatic).map(\.name) == ["id", "createdAt", "updatedAt", "_version"])
        #expect(todo.rules == [AuthRule(allow: .owners(field: "members"))])
    }

    @Test func defaultsFollowTheConventionsAmplifyUses() throws {
        let schema = try DataSchema(
            sdl: """
                type Comment @model { postId: ID post: Post @belongsTo }
                type Post @model @auth(rules: [{allow: owner, ownerField: "author", operations: [create, update, delete]}]) {
                  author: String
                  title: String @index
                  comments: [Comment] @hasMany
                }
                """)
        let post = try #require(schema.model(named: "Post"))
        #expect(post.relations == [DataRelation(field: "comments", kind: .hasMany, target: "Comment", references: "postId")])
        #expect(post.indexes == [DataIndex(name: "byTitle", partitionKey: "title")])
        #expect(post.rules == [AuthRule(allow: .owner(field: "author"), operations: [.create, .update, .delete])])
        #expect(post.field(named: "owner") == nil, "a declared owner field is used, none is added")
        #expect(schema.model(named: "Comment")?.relations == [DataRelation(field: "post", kind: .belongsTo, target: "Post", references: "postId")])
    }

    @Test func aModelWithoutAuthHasNoRules() throws {
        let schema = try DataSchema(sdl: "type Note @model { body: String }")
        #expect(schema.model(named: "Note")?.rules == [])
    }

    @Test(arguments: ["", "  \n\t", "# no schema yet\n, # still none"])
    func textWithNoDefinitionsIsTheEmptySchema(_ sdl: String) throws {
        #expect(try DataSchema(sdl: sdl) == .empty)
    }

    @Test(arguments: [
        ("Int", "3", JSONValue.number(3)),
        ("Int", "-42", -42),
        ("Float", "1.5", 1.5),
        ("Boolean", "true", true),
        ("Boolean", "false", false),
        ("String", "hello", "hello"),
        ("ID", "general", "general"),
        ("DateTime", "2025-01-31T09:00:00Z", "2025-01-31T09:00:00Z"),
        ("AWSDateTime", "2025-01-31T09:00:00.250+09:00", "2025-01-31T09:00:00.250+09:00"),
        ("JSON", #"{"a": [1, true]}"#, JSONValue.object(["a": .array([.number(1), .bool(true)])])),
        ("Level", "HIGH", "HIGH"),
    ])
    func defaultsAreConvertedToTheFieldsType(_ type: String, _ text: String, _ expected: JSONValue) throws {
        // A block string, so JSON's quotes need no escaping.
        let schema = try DataSchema(sdl: #"enum Level { LOW HIGH } type Item @model { value: \#(type) @default(value: """\#(text)""") }"#)
        #expect(schema.model(named: "Item")?.field(named: "value")?.defaultValue == expected)
    }

    @Test(arguments: [
        ("Int", "three"), ("Int", "1.5"), ("Int", "99999999999999999"), ("Float", "nan"), ("Boolean", "yes"), ("DateTime", "tomorrow"),
        ("DateTime", "2025-01-31"), ("JSON", "{oops"), ("Level", "MEDIUM"), ("[String]", "a"),
    ])
    func badDefaultsAreRefused(_ type: String, _ text: String) {
        let details = problems(#"enum Level { LOW HIGH } type Item @model { value: \#(type) @default(value: """\#(text)""") }"#)
        #expect(details.map(\.code) == ["bad_default"])
    }

    /// An invalid schema with the one problem it must report, and where.
    struct Invalid: CustomTestStringConvertible, Sendable {
        let name: String
        let sdl: String
        let code: String
        let line: Int
        let column: Int
        var testDescription: String { name }

        init(_ name: String, _ sdl: String, _ code: String, line: Int, column: Int) {
            self.name = name
            self.sdl = sdl
            self.code = code
            self.line = line
            self.column = column
        }
    }

    static let invalid: [Invalid] = [
        Invalid("an unknown type", #"type Note @model { body: Strng }"#, "unknown_type", line: 1, column: 26),
        Invalid("an object type without @model", #"type Address { street: String }"#, "not_a_model", line: 1, column: 6),
        Invalid("an unknown directive on a type", #"type Note @model @searchable { body: String }"#, "unknown_directive", line: 1, column: 18),
        Invalid("an unknown directive on a field", #"type Note @model { body: String @hasOne }"#, "unknown_directive", line: 1, column: 33),
        Invalid("an unknown argument", #"type Note @model(timestamps: null) { body: String }"#, "unknown_argument", line: 1, column: 18),
        Invalid("a duplicate model", #"type Note @model { a: String } type Note @model { b: String }"#, "duplicate_type", line: 1, column: 37),
        Invalid("a model named like an enum", #"enum Note { A } type Note @model { b: String }"#, "duplicate_type", line: 1, column: 22),
        Invalid("a duplicate field", #"type Note @model { body: String body: Int }"#, "duplicate_field", line: 1, column: 33),
        Invalid("a duplicate enum value", #"enum Color { RED RED }"#, "duplicate_enum_value", line: 1, column: 18),
        Invalid(
            "a duplicate index name", #"type Note @model { a: String @index(name: "byA") b: String @index(name: "byA") }"#, "duplicate_index",
            line: 1, column: 73),
        Invalid("a field starting with _", #"type Note @model { _secret: String }"#, "reserved_name", line: 1, column: 20),
        Invalid("a declared _version", #"type Note @model { _version: Int }"#, "reserved_name", line: 1, column: 20),
        Invalid("a model named after a scalar", #"type JSON @model { a: String }"#, "reserved_name", line: 1, column: 6),
        Invalid(
            "a model name over 48 characters", #"type Abbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb @model { a: String }"#, "too_long", line: 1,
            column: 6),
        Invalid(
            "a field name over 60 characters", #"type Note @model { fxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx: String }"#,
            "too_long", line: 1, column: 20),
        Invalid("a list of lists", #"type Note @model { grid: [[Int]] }"#, "list_of_lists", line: 1, column: 26),
        Invalid("a relation directive on a scalar", #"type Note @model { tag: String @belongsTo }"#, "bad_relation", line: 1, column: 32),
        Invalid(
            "@belongsTo on a list",
            #"type Room @model { a: String } type Message @model { roomId: ID rooms: [Room] @belongsTo(references: ["roomId"]) }"#, "bad_relation",
            line: 1, column: 79),
        Invalid(
            "@hasMany on a single model", #"type Room @model { message: Message @hasMany } type Message @model { roomId: ID }"#, "bad_relation",
            line: 1, column: 37),
        Invalid(
            "a model field without a relation directive", #"type Room @model { name: String } type Message @model { room: Room }"#,
            "relation_required", line: 1, column: 57),
        Invalid(
            "a missing default belongsTo id field", #"type Room @model { name: String } type Message @model { room: Room @belongsTo }"#,
            "unknown_field", line: 1, column: 68),
        Invalid(
            "a belongsTo id field of the wrong type",
            #"type Room @model { name: String } type Message @model { roomId: String room: Room @belongsTo(references: ["roomId"]) }"#, "wrong_type",
            line: 1, column: 106),
        Invalid(
            "a composite reference",
            #"type Room @model { name: String } type Message @model { a: ID b: ID room: Room @belongsTo(references: ["a", "b"]) }"#, "unsupported",
            line: 1, column: 103),
        Invalid(
            "a missing hasMany id field on the target", #"type Room @model { messages: [Message] @hasMany } type Message @model { text: String }"#,
            "unknown_field", line: 1, column: 40),
        Invalid(
            "an owner field of the wrong type", #"type Note @model @auth(rules: [{allow: owner, ownerField: "author"}]) { author: Int }"#,
            "bad_owner_field", line: 1, column: 59),
        Invalid(
            "an owners field that is not a list", #"type Note @model @auth(rules: [{allow: owners, ownerField: "author"}]) { author: String }"#,
            "bad_owner_field", line: 1, column: 60),
        Invalid(
            "an owner field that does not exist", #"type Note @model @auth(rules: [{allow: owner, ownerField: "author"}]) { a: String }"#,
            "unknown_field", line: 1, column: 59),
        Invalid(
            "via naming a field that is not a belongsTo", #"type Message @model @auth(rules: [{allow: owner, via: "text"}]) { text: String }"#,
            "bad_via", line: 1, column: 55),
        Invalid(
            "via on a groups rule",
            #"type Room @model { a: String } type Message @model @auth(rules: [{allow: groups, groups: ["admins"], via: "room"}]) { roomId: ID room: Room @belongsTo }"#,
            "unknown_argument", line: 1, column: 102),
        Invalid("an unknown allow", #"type Note @model @auth(rules: [{allow: admins}]) { a: String }"#, "unknown_value", line: 1, column: 40),
        Invalid(
            "an unknown operation", #"type Note @model @auth(rules: [{allow: private, operations: [read, erase]}]) { a: String }"#, "unknown_value",
            line: 1, column: 68),
        Invalid("an empty enum", #"enum Color {}"#, "empty_enum", line: 1, column: 6),
        Invalid("an id that is not ID!", #"type Note @model { id: String! }"#, "bad_id", line: 1, column: 24),
        Invalid("a createdAt that is not a DateTime", #"type Note @model { createdAt: Int }"#, "wrong_type", line: 1, column: 31),
        Invalid("an input type", #"input NoteInput { body: String }"#, "unsupported_definition", line: 1, column: 1),
        Invalid("a bad default", #"type Note @model { count: Int @default(value: "many") }"#, "bad_default", line: 1, column: 47),
        Invalid("a default that is not a string", #"type Note @model { count: Int @default(value: 3) }"#, "wrong_type", line: 1, column: 47),
        Invalid(
            "a sort key that does not exist", #"type Note @model { a: String @index(name: "byA", sortKeyFields: ["b"]) }"#, "unknown_field", line: 1,
            column: 65),
        Invalid("an index on a list", #"type Note @model { tags: [String] @index(name: "byTags") }"#, "wrong_type", line: 1, column: 35),
        Invalid("a problem on the third line", #"type Note @model {\#n  body: String\#n  body: Int\#n}"#, "duplicate_field", line: 3, column: 3),
        Invalid(
            "lines ended with CR LF", #"type Note @model {\#r\#n  body: String\#r\#n\#r\#n  count: Number\#r\#n}"#, "unknown_type", line: 4,
            column: 10),
        Invalid("columns counted in characters after Japanese", #"type Note @model { "メモ" body: Strng }"#, "unknown_type", line: 1, column: 31),
    ]

    @Test(arguments: invalid)
    func anInvalidSchemaNamesItsProblemAndWhereItIs(_ invalid: Invalid) throws {
        let details = problems(invalid.sdl)
        let detail = try #require(details.first)
        #expect(details.count == 1, "\(details.map(\.message))")
        #expect(detail.code == invalid.code, "\(detail.message)")
        #expect(detail.field == "sdl")
        #expect(detail.line == invalid.line)
        #expect(detail.column == invalid.column)
    }

    @Test func everyProblemIsReportedAtOnceInFileOrder() throws {
        let error = try #require(
            failure(
                """
                type Address { street: String }
                type Note @model @auth(rules: [{allow: owner, ownerField: "writer"}]) {
                  body: Strng
                  _hidden: String
                  home: Address
                }
                """))
        #expect(error.code == .validationFailed)
        #expect(error.field == "sdl")
        #expect(error.message.hasPrefix("The data schema is not valid: line 1, column 6: "))
        #expect(error.message.hasSuffix("(and 4 more problems)"))
        #expect(error.details.map(\.code) == ["not_a_model", "unknown_field", "unknown_type", "reserved_name", "not_a_model"])
        #expect(error.details.map(\.line) == [1, 2, 3, 4, 5])
        #expect(error.details.allSatisfy { $0.field == "sdl" && $0.column != nil })
    }

    @Test func aSyntaxErrorComesFromTheParserWithItsPlace() throws {
        let details = problems("type Note @model {\n  body: String\n  : Int\n}")
        let detail = try #require(details.first)
        #expect(details.count == 1)
        #expect(detail.code == "syntax_error")
        #expect(detail.message.hasPrefix("Syntax error: Expected Name"), "\(detail.message)")
        #expect(!detail.message.contains("\n"), "the parser's source excerpt is left out")
        #expect(detail.line == 3)
        #expect(detail.column == 3)
    }

    @Test func nestingTooDeepIsRefusedBeforeParsing() throws {
        let prefix = "type Note @model { a: String @x(v: "
        let sdl = prefix + String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000) + ") }"
        let detail = try #require(problems(sdl).first)
        #expect(detail.code == "too_deep")
        // `{` and `(` are two levels, so the 31st `[` is the 33rd.
        #expect(detail.line == 1)
        #expect(detail.column == prefix.count + 31)
    }

    @Test func aSchemaHoldsAtMost200Models() throws {
        let sdl = (1...201).map { "type M\($0) @model { a: String }" }.joined(separator: "\n")
        let details = problems(sdl)
        #expect(details.map(\.code) == ["too_many_models"])
        #expect(details.first?.line == 201)
        #expect(details.first?.column == 6)
        #expect(problems((1...200).map { "type M\($0) @model { a: String }" }.joined(separator: "\n")).isEmpty)
    }

    @Test func aModelHoldsAtMost200Fields() throws {
        let fields = (1...201).map { "f\($0): String" }.joined(separator: " ")
        let details = problems("type Wide @model { \(fields) }")
        #expect(details.map(\.code) == ["too_many_fields"])
        #expect(details.first?.column == 6)
    }

    @Test func theErrorDescriptionSaysWhereEachProblemIs() throws {
        let error = try #require(failure("type Note @model {\n  body: Strng\n}"))
        #expect(error.description.contains("sdl: line 2, column 9: Note.body: there is no type Strng"), "\(error.description)")
    }

    private func problems(_ sdl: String) -> [KizunaError.Detail] {
        failure(sdl)?.details ?? []
    }

    private func failure(_ sdl: String) -> KizunaError? {
        do {
            _ = try DataSchema(sdl: sdl)
            return nil
        } catch {
            return error
        }
    }
}
