import KizunaCore
import SQLKit
import Testing

@testable import KizunaServer

/// Amplify filters compiled to SQL and run on both engines: every operator on every field type, and/or/not, unset
/// fields, case-sensitive text tests, and every problem of a bad filter in one answer.
@Suite("Data filter")
struct DataFilterTests {
    /// 2025-01-31T09:00:00Z in epoch milliseconds.
    static let t0: Int64 = 1_738_314_000_000

    /// Five notes; `d` has every field unset, and the text of `c` and `d` differs only where LIKE would not see it.
    static let notes: [NotesFixture.Note] = [
        .init(
            id: "a", title: "Hello World", likes: 10, score: 1.5, done: true, dueAt: DataFilterTests.t0, mood: "HAPPY", tags: #"["red","blue"]"#,
            sizes: "[1,2,3]",
            meta: #"{"k": "v", "n": 1}"#),
        .init(
            id: "b", title: "hello world", likes: 20, score: 2.5, done: false, dueAt: DataFilterTests.t0 + 500, mood: "SAD", tags: #"["green"]"#,
            sizes: "[4]",
            meta: #"{"k": "w"}"#),
        .init(
            id: "c", title: "100% off_sale", likes: 30, score: -1, done: true, dueAt: 1_738_368_000_000, mood: "CALM", tags: "[]", sizes: "[2]",
            meta: "[1, 2]"),
        .init(id: "d", title: "100 percent offXsale"),
        .init(id: "e", likes: 10, score: 0, done: false, dueAt: 1_735_689_599_999, mood: "HAPPY", tags: #"["Red"]"#),
    ]

    /// Runs `body` with the notes in a fresh store of `backend`.
    static func withNotes(_ backend: TestBackend, _ body: (NotesFixture) async throws -> Void) async throws {
        try await withMigratedStore(backend) { database, _ in
            let fixture = try await NotesFixture.make(database)
            try await fixture.insert(Self.notes)
            try await body(fixture)
        }
    }

    @Test(arguments: TestBackend.available)
    func stringOperatorsAreCaseSensitiveAndTakeTextLiterally(_ backend: TestBackend) async throws {
        try await Self.withNotes(backend) { notes in
            let first = try await notes.ids(["title": ["eq": "Hello World"]])
            #expect(first == ["a"])
            do {  // e has no title
                let result = try await notes.ids(["title": ["ne": "Hello World"]])
                #expect(result == ["b", "c", "d", "e"])
            }
            // Bounds that order the same in every collation: digits before letters.
            do {
                let result = try await notes.ids(["title": ["lt": "A"]])
                #expect(result == ["c", "d"])
            }
            do {
                let result = try await notes.ids(["title": ["le": "A"]])
                #expect(result == ["c", "d"])
            }
            do {
                let result = try await notes.ids(["title": ["gt": "A"]])
                #expect(result == ["a", "b"])
            }
            do {
                let result = try await notes.ids(["title": ["ge": "A"]])
                #expect(result == ["a", "b"])
            }
            do {
                let result = try await notes.ids(["title": ["between": ["0", "9"]]])
                #expect(result == ["c", "d"])
            }
            do {
                let result = try await notes.ids(["title": ["contains": "World"]])
                #expect(result == ["a"])
            }
            do {
                let result = try await notes.ids(["title": ["contains": "world"]])
                #expect(result == ["b"])
            }
            do {
                let result = try await notes.ids(["title": ["notContains": "World"]])
                #expect(result == ["b", "c", "d", "e"])
            }
            do {
                let result = try await notes.ids(["title": ["beginsWith": "hello"]])
                #expect(result == ["b"])
            }
            do {
                let result = try await notes.ids(["title": ["beginsWith": "Hello"]])
                #expect(result == ["a"])
            }
            // `%` and `_` mean themselves: LIKE would match d with each of these.
            do {
                let result = try await notes.ids(["title": ["contains": "% off_"]])
                #expect(result == ["c"])
            }
            do {
                let result = try await notes.ids(["title": ["contains": "_"]])
                #expect(result == ["c"])
            }
            do {
                let result = try await notes.ids(["title": ["beginsWith": "100%"]])
                #expect(result == ["c"])
            }
            do {
                let result = try await notes.ids(["title": ["beginsWith": "100_"]])
                #expect(result == [])
            }
            do {
                let result = try await notes.ids(["title": ["in": ["Hello World", "hello world", "nothing"]]])
                #expect(result == ["a", "b"])
            }
            do {
                let result = try await notes.ids(["title": ["notIn": ["Hello World"]]])
                #expect(result == ["b", "c", "d", "e"])
            }
            do {
                let result = try await notes.ids(["title": ["attributeExists": true]])
                #expect(result == ["a", "b", "c", "d"])
            }
            do {
                let result = try await notes.ids(["title": ["attributeExists": false]])
                #expect(result == ["e"])
            }
            do {  // two operators: both hold
                let result = try await notes.ids(["title": ["gt": "A", "contains": "o W"]])
                #expect(result == ["a"])
            }
        }
    }

    @Test(arguments: TestBackend.available)
    func numberAndBooleanOperators(_ backend: TestBackend) async throws {
        try await Self.withNotes(backend) { notes in
            do {
                let result = try await notes.ids(["likes": ["eq": 10]])
                #expect(result == ["a", "e"])
            }
            do {
                let result = try await notes.ids(["likes": ["ne": 10]])
                #expect(result == ["b", "c", "d"])
            }
            do {
                let result = try await notes.ids(["likes": ["lt": 20]])
                #expect(result == ["a", "e"])
            }
            do {
                let result = try await notes.ids(["likes": ["le": 20]])
                #expect(result == ["a", "b", "e"])
            }
            do {
                let result = try await notes.ids(["likes": ["gt": 20]])
                #expect(result == ["c"])
            }
            do {
                let result = try await notes.ids(["likes": ["ge": 20]])
                #expect(result == ["b", "c"])
            }
            do {
                let result = try await notes.ids(["likes": ["between": [10, 20]]])
                #expect(result == ["a", "b", "e"])
            }
            do {
                let result = try await notes.ids(["likes": ["in": [20, 30]]])
                #expect(result == ["b", "c"])
            }
            do {
                let result = try await notes.ids(["likes": ["notIn": [10]]])
                #expect(result == ["b", "c", "d"])
            }
            do {
                let result = try await notes.ids(["likes": ["attributeExists": false]])
                #expect(result == ["d"])
            }

            do {
                let result = try await notes.ids(["score": ["eq": 1.5]])
                #expect(result == ["a"])
            }
            do {
                let result = try await notes.ids(["score": ["ne": 2.5]])
                #expect(result == ["a", "c", "d", "e"])
            }
            do {
                let result = try await notes.ids(["score": ["lt": 0]])
                #expect(result == ["c"])
            }
            do {
                let result = try await notes.ids(["score": ["le": -1]])
                #expect(result == ["c"])
            }
            do {
                let result = try await notes.ids(["score": ["gt": 0]])
                #expect(result == ["a", "b"])
            }
            do {
                let result = try await notes.ids(["score": ["ge": 2.5]])
                #expect(result == ["b"])
            }
            do {
                let result = try await notes.ids(["score": ["between": [-1, 1.5]]])
                #expect(result == ["a", "c", "e"])
            }
            do {
                let result = try await notes.ids(["score": ["in": [1.5, -1]]])
                #expect(result == ["a", "c"])
            }
            do {
                let result = try await notes.ids(["score": ["notIn": [1.5, -1]]])
                #expect(result == ["b", "d", "e"])
            }

            do {
                let result = try await notes.ids(["done": ["eq": true]])
                #expect(result == ["a", "c"])
            }
            do {
                let result = try await notes.ids(["done": ["eq": false]])
                #expect(result == ["b", "e"])
            }
            do {
                let result = try await notes.ids(["done": ["ne": true]])
                #expect(result == ["b", "d", "e"])
            }
            do {
                let result = try await notes.ids(["done": ["attributeExists": true]])
                #expect(result == ["a", "b", "c", "e"])
            }
        }
    }

    @Test(arguments: TestBackend.available)
    func dateTimesCompareAsInstantsWithFractionsAndOffsets(_ backend: TestBackend) async throws {
        try await Self.withNotes(backend) { notes in
            do {
                let result = try await notes.ids(["dueAt": ["eq": "2025-01-31T09:00:00Z"]])
                #expect(result == ["a"])
            }
            do {
                let result = try await notes.ids(["dueAt": ["eq": "2025-01-31T18:00:00+09:00"]])
                #expect(result == ["a"])
            }
            do {
                let result = try await notes.ids(["dueAt": ["eq": "2025-01-31T09:00:00.5Z"]])
                #expect(result == ["b"])
            }
            do {
                let result = try await notes.ids(["dueAt": ["eq": "2025-01-31T04:00:00.500123-05:00"]])
                #expect(result == ["b"])
            }
            do {
                let result = try await notes.ids(["dueAt": ["ne": "2025-01-31T09:00:00.000Z"]])
                #expect(result == ["b", "c", "d", "e"])
            }
            do {
                let result = try await notes.ids(["dueAt": ["lt": "2025-01-31T09:00:00Z"]])
                #expect(result == ["e"])
            }
            do {
                let result = try await notes.ids(["dueAt": ["le": "2025-01-31T09:00:00Z"]])
                #expect(result == ["a", "e"])
            }
            do {
                let result = try await notes.ids(["dueAt": ["gt": "2025-01-31T09:00:00Z"]])
                #expect(result == ["b", "c"])
            }
            do {
                let result = try await notes.ids(["dueAt": ["ge": "2025-01-31T09:00:00.500Z"]])
                #expect(result == ["b", "c"])
            }
            do {
                let result = try await notes.ids(["dueAt": ["between": ["2025-01-01T00:00:00Z", "2025-01-31T23:59:59Z"]]])
                #expect(result == ["a", "b"])
            }
            do {
                let result = try await notes.ids(["dueAt": ["in": ["2025-01-31T09:00:00Z", "2025-02-01T09:00:00+09:00"]]])
                #expect(result == ["a", "c"])
            }
            do {
                let result = try await notes.ids(["dueAt": ["notIn": ["2025-01-31T09:00:00Z"]]])
                #expect(result == ["b", "c", "d", "e"])
            }
            do {
                let result = try await notes.ids(["dueAt": ["attributeExists": false]])
                #expect(result == ["d"])
            }
            // The automatic fields filter the same way.
            do {
                let result = try await notes.ids(["createdAt": ["eq": "1970-01-01T00:00:01Z"]])
                #expect(result == ["a", "b", "c", "d", "e"])
            }
            do {
                let result = try await notes.ids(["updatedAt": ["gt": "1970-01-01T00:00:01Z"]])
                #expect(result == [])
            }
            do {
                let result = try await notes.ids(["id": ["in": ["b", "e"]]])
                #expect(result == ["b", "e"])
            }
            do {
                let result = try await notes.ids(["_version": ["eq": 1]])
                #expect(result == ["a", "b", "c", "d", "e"])
            }
        }
    }

    @Test(arguments: TestBackend.available)
    func enumsListsAndJSON(_ backend: TestBackend) async throws {
        try await Self.withNotes(backend) { notes in
            do {
                let result = try await notes.ids(["mood": ["eq": "HAPPY"]])
                #expect(result == ["a", "e"])
            }
            do {
                let result = try await notes.ids(["mood": ["ne": "HAPPY"]])
                #expect(result == ["b", "c", "d"])
            }
            do {
                let result = try await notes.ids(["mood": ["in": ["SAD", "CALM"]]])
                #expect(result == ["b", "c"])
            }
            do {
                let result = try await notes.ids(["mood": ["notIn": ["HAPPY"]]])
                #expect(result == ["b", "c", "d"])
            }
            do {
                let result = try await notes.ids(["mood": ["beginsWith": "HA"]])
                #expect(result == ["a", "e"])
            }
            do {
                let result = try await notes.ids(["mood": ["attributeExists": false]])
                #expect(result == ["d"])
            }

            do {  // e holds "Red"
                let result = try await notes.ids(["tags": ["contains": "red"]])
                #expect(result == ["a"])
            }
            do {
                let result = try await notes.ids(["tags": ["notContains": "red"]])
                #expect(result == ["b", "c", "d", "e"])
            }
            do {
                let result = try await notes.ids(["tags": ["eq": ["green"]]])
                #expect(result == ["b"])
            }
            do {
                let result = try await notes.ids(["tags": ["eq": []]])
                #expect(result == ["c"])
            }
            do {
                let result = try await notes.ids(["tags": ["ne": ["green"]]])
                #expect(result == ["a", "c", "d", "e"])
            }
            do {
                let result = try await notes.ids(["tags": ["attributeExists": false]])
                #expect(result == ["d"])
            }
            do {
                let result = try await notes.ids(["sizes": ["contains": 2]])
                #expect(result == ["a", "c"])
            }
            do {
                let result = try await notes.ids(["sizes": ["notContains": 2]])
                #expect(result == ["b", "d", "e"])
            }
            do {
                let result = try await notes.ids(["sizes": ["eq": [1, 2, 3]]])
                #expect(result == ["a"])
            }

            do {
                let result = try await notes.ids(["meta": ["eq": ["k": "v", "n": 1]]])
                #expect(result == ["a"])
            }
            do {  // AWSJSON: a string of JSON
                let result = try await notes.ids(["meta": ["eq": #"{"n": 1, "k": "v"}"#]])
                #expect(result == ["a"])
            }
            do {
                let result = try await notes.ids(["meta": ["eq": [1, 2]]])
                #expect(result == ["c"])
            }
            do {
                let result = try await notes.ids(["meta": ["ne": ["k": "w"]]])
                #expect(result == ["a", "c", "d", "e"])
            }
            do {
                let result = try await notes.ids(["meta": ["attributeExists": true]])
                #expect(result == ["a", "b", "c"])
            }
        }
    }

    @Test(arguments: TestBackend.available)
    func andOrNotNestAndUnsetFieldsFailTheirTests(_ backend: TestBackend) async throws {
        try await Self.withNotes(backend) { notes in
            do {
                let result = try await notes.ids(["and": [["likes": ["ge": 10]], ["done": ["eq": true]]]])
                #expect(result == ["a", "c"])
            }
            do {
                let result = try await notes.ids(["or": [["mood": ["eq": "SAD"]], ["title": ["beginsWith": "100"]]]])
                #expect(result == ["b", "c", "d"])
            }
            // A test on an unset field is false, so its negation holds: d (no `done`) is listed.
            do {
                let result = try await notes.ids(["not": ["done": ["eq": true]]])
                #expect(result == ["b", "d", "e"])
            }
            do {
                let result = try await notes.ids(["not": ["or": [["done": ["eq": true]], ["likes": ["eq": 10]]]]])
                #expect(result == ["b", "d"])
            }
            do {
                let result = try await notes.ids(["not": ["not": ["likes": ["gt": 15]]]])
                #expect(result == ["b", "c"])
            }
            let nested: JSONValue = [
                "or": [
                    ["and": [["likes": ["eq": 10]], ["not": ["mood": ["eq": "SAD"]]]]],
                    ["tags": ["contains": "green"]],
                ]
            ]
            do {
                let result = try await notes.ids(nested)
                #expect(result == ["a", "b", "e"])
            }
            do {
                let result = try await notes.ids(["done": ["eq": true], "or": [["likes": ["eq": 10]], ["likes": ["eq": 30]]]])
                #expect(result == ["a", "c"])
            }
            do {
                let result = try await notes.ids([:])
                #expect(result == ["a", "b", "c", "d", "e"])
            }
            do {
                let result = try await notes.ids(["or": [[:], ["likes": ["eq": 10]]]])
                #expect(result == ["a", "b", "c", "d", "e"])
            }
            do {
                let result = try await notes.ids(["not": [:]])
                #expect(result == [])
            }
        }
    }

    @Test(arguments: TestBackend.available)
    func valuesAreBoundNeverWrittenIntoTheSQL(_ backend: TestBackend) async throws {
        try await Self.withNotes(backend) { notes in
            let hostile = "x'); DROP TABLE notes; --"
            let filter = try notes.filter(["title": ["eq": .string(hostile), "contains": "o'o"], "tags": ["contains": .string(hostile)]])
            let condition = try #require(filter.condition)
            let (sql, binds) = notes.database.serialize(condition)
            #expect(!sql.contains("DROP") && !sql.contains("o'o"))
            #expect(binds.count == 3)
            do {
                let result = try await notes.ids(["title": ["eq": .string(hostile)]])
                #expect(result == [])
            }
        }
    }

    @Test func unindexedFieldsAreTheOnesNoIndexLeadsWith() throws {
        let schema = try DataSchema(sdl: NotesFixture.sdl)
        let model = try #require(schema.model(named: "Note"))
        let filter = try DataFilter(
            [
                "roomId": ["eq": "r1"], "title": ["eq": "x"], "or": [["likes": ["gt": 1]], ["createdAt": ["gt": "2025-01-01T00:00:00Z"]]],
                "not": ["mood": ["eq": "SAD"]], "and": [["title": ["ne": "y"]], ["id": ["eq": "a"]]],
            ], model: model, schema: schema, table: "t", dialect: .sqlite)
        #expect(filter.fields == ["title", "id", "mood", "likes", "createdAt", "roomId"])
        #expect(filter.unindexedFields == ["title", "likes"])
        #expect(try DataFilter(nil, model: model, schema: schema, table: "t", dialect: .postgres).condition == nil)
        #expect(try DataFilter(.null, model: model, schema: schema, table: "t", dialect: .postgres).unindexedFields.isEmpty)
    }

    @Test func everyProblemIsListedInOneError() throws {
        let schema = try DataSchema(sdl: NotesFixture.sdl)
        let model = try #require(schema.model(named: "Note"))
        let bad: JSONValue = [
            "title": ["between": ["a"], "size": 3],
            "likes": ["eq": 1.5, "in": [1, "2"]],
            "nope": ["eq": 1],
            "done": ["lt": true],
            "mood": ["eq": "ANGRY"],
            "dueAt": ["gt": "2025-01-31", "lt": "2025-01-31T09:00:00"],
            "tags": ["beginsWith": "r", "eq": "red"],
            "score": ["in": []],
            "meta": ["contains": "k"],
            "or": [],
            "not": "x",
            "and": [["title": ["eq": nil]], ["likes": ["between": [1, "2"]]], ["score": [:]], 3],
        ]
        let error = #expect(throws: KizunaError.self) { try DataFilter(bad, model: model, schema: schema, table: "t", dialect: .sqlite) }
        #expect(error?.code == .validationFailed && error?.field == "filter")
        let problems = Set((error?.details ?? []).map { "\($0.field ?? "") \($0.code)" })
        #expect(
            problems == [
                "filter.and[0].title.eq wrong_type",
                "filter.and[1].likes.between[1] invalid_value",
                "filter.and[2].score empty",
                "filter.and[3] wrong_type",
                "filter.done.lt unsupported_operator",
                "filter.dueAt.gt invalid_value",
                "filter.dueAt.lt invalid_value",
                "filter.likes.eq invalid_value",
                "filter.likes.in[1] invalid_value",
                "filter.meta.contains unsupported_operator",
                "filter.mood.eq invalid_value",
                "filter.nope unknown_field",
                "filter.not wrong_type",
                "filter.or empty",
                "filter.score.in wrong_type",
                "filter.tags.beginsWith unsupported_operator",
                "filter.tags.eq wrong_type",
                "filter.title.between wrong_type",
                "filter.title.size unknown_operator",
            ])
        #expect(error?.details.count == problems.count)
    }

    @Test func limitsAreProblemsToo() throws {
        let schema = try DataSchema(sdl: NotesFixture.sdl)
        let model = try #require(schema.model(named: "Note"))
        // Ten nots in an `or` item (level 2): the ninth would open level 11.
        var deep: JSONValue = ["likes": ["eq": 1]]
        for _ in 0..<10 { deep = ["not": deep] }
        let bad: JSONValue = [
            "title": ["in": .array((0...100).map(Self.text))],
            "and": .array((0...50).map(Self.likes)),
            "or": .array((0..<49).map(Self.likes) + [deep]),
            "room": ["eq": "r1"],
        ]
        let error = #expect(throws: KizunaError.self) { try DataFilter(bad, model: model, schema: schema, table: "t", dialect: .postgres) }
        let problems = Set((error?.details ?? []).map { "\($0.field ?? "") \($0.code)" })
        #expect(
            problems == [
                "filter.title.in too_many_values",
                "filter.and too_many_items",
                "filter.or[49].not.not.not.not.not.not.not.not.not too_deep",
                "filter too_many_conditions",
                "filter.room unknown_field",
            ])
        // At the limits, the same filter is fine.
        let fine: JSONValue = [
            "title": ["in": .array((0..<100).map(Self.text))],
            "and": .array((0..<50).map(Self.likes)),
        ]
        #expect(try DataFilter(fine, model: model, schema: schema, table: "t", dialect: .postgres).condition != nil)
    }

    static func text(_ index: Int) -> JSONValue { .string("t\(index)") }
    static func likes(_ index: Int) -> JSONValue { ["likes": ["eq": .number(Double(index))]] }
}
