import Crypto
import KizunaCore
import SQLKit
import Testing

@testable import KizunaServer

/// Keyset pages on both engines: every row once, in order, in both directions, with ties on `createdAt`, with rows
/// written between pages, with a filter that matches few rows, and through an index with each key condition.
@Suite("Keyset pages")
struct KeysetPageTests {
    typealias Note = NotesFixture.Note

    static func id(_ number: Int) -> String { number < 10 ? "n0\(number)" : "n\(number)" }

    /// The default order's key of a note.
    static func key(_ note: Note) -> (Int64, String) { (note.createdAt, note.id) }

    /// 24 notes in groups of three created in the same millisecond, their ids not in creation order.
    static let tied: [Note] = (0..<24).map { Note(id: KeysetPageTests.id($0 * 7 % 24), createdAt: 1_000 + Int64($0 / 3)) }

    @Test(arguments: TestBackend.available)
    func pagesListEveryRowOnceInBothDirections(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            let notes = try await NotesFixture.make(database)
            try await notes.insert(Self.tied + [Note(id: "gone", createdAt: 1_003, deleted: true)])
            let expected = Self.tied.sorted { Self.key($0) < Self.key($1) }.map(\.id)
            for limit in [1, 2, 4, 5, 23, 24, 100] {
                let up = try await notes.pages(limit: limit)
                #expect(up.flatMap { $0 } == expected, "limit \(limit)")
                #expect(up.count == max(1, (expected.count + limit - 1) / limit), "no empty last page, limit \(limit)")
                let down = try await notes.pages(descending: true, limit: limit)
                #expect(down.flatMap { $0 } == Array(expected.reversed()), "limit \(limit), descending")
            }
        }
    }

    @Test(arguments: TestBackend.available, [false, true])
    func rowsWrittenBetweenPagesAppearOnlyPastTheCursor(_ backend: TestBackend, descending: Bool) async throws {
        try await withMigratedStore(backend) { database, _ in
            let notes = try await NotesFixture.make(database)
            let original = (0..<12).map { Note(id: Self.id($0 * 5 % 12), createdAt: 2_000 + Int64($0 / 2)) }
            try await notes.insert(original)
            var inserted: [Note] = []
            var cursor: (Int64, String)?
            let pages = try await notes.pages(descending: descending, limit: 4) { number, ids in
                guard number == 1, let last = ids.last, let note = original.first(where: { $0.id == last }) else { return }
                // Another writer, between two page requests: rows on both sides of the cursor, some in its millisecond.
                inserted = [
                    Note(id: "a00", createdAt: 1_000),
                    Note(id: "a01", createdAt: note.createdAt),
                    Note(id: "z01", createdAt: note.createdAt),
                    Note(id: "m02", createdAt: note.createdAt + 1),
                    Note(id: "m03", createdAt: note.createdAt - 1),
                    Note(id: "z09", createdAt: 9_000),
                ]
                try await notes.insert(inserted)
                cursor = Self.key(note)
            }
            let position = try #require(cursor)
            let isPast: (Note) -> Bool = { descending ? Self.key($0) < position : Self.key($0) > position }
            let ordered = (original + inserted).sorted { descending ? Self.key($0) > Self.key($1) : Self.key($0) < Self.key($1) }
            let expected = pages[0] + ordered.filter(isPast).map(\.id)
            #expect(pages.flatMap { $0 } == expected)
            #expect(Set(expected).count == expected.count && Set(pages[0]).isSubset(of: original.map(\.id)))
            #expect(inserted.filter(isPast).count == 3)
        }
    }

    @Test(arguments: TestBackend.available)
    func aFilterThatMatchesFewRowsStillFillsEachPage(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            let notes = try await NotesFixture.make(database)
            try await notes.insert((0..<50).map { Note(id: Self.id($0), likes: Int64($0), createdAt: 1_000 + Int64($0)) })
            // Six matching rows, five of them at the very end of the table.
            let filter: JSONValue = ["or": [["likes": ["ge": 45]], ["likes": ["eq": 3]]]]
            #expect(try await notes.pages(limit: 4, filter: filter) == [["n03", "n45", "n46", "n47"], ["n48", "n49"]])
            #expect(try await notes.pages(limit: 2, filter: filter).map(\.count) == [2, 2, 2])
            #expect(try await notes.pages(limit: 6, filter: filter).map(\.count) == [6])
            #expect(try await notes.pages(descending: true, limit: 5, filter: filter) == [["n49", "n48", "n47", "n46", "n45"], ["n03"]])
            #expect(try await notes.pages(limit: 3, filter: ["likes": ["gt": 100]]) == [[]])
        }
    }

    @Test(arguments: TestBackend.available)
    func indexQueriesFollowTheSortKeyAndItsCondition(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            let notes = try await NotesFixture.make(database)
            try await notes.insert([
                Note(id: "i1", title: "apple", createdAt: 5), Note(id: "i2", title: "apricot", createdAt: 4),
                Note(id: "i3", title: "banana", createdAt: 3), Note(id: "i4", title: "banana", createdAt: 3),
                Note(id: "i5", title: "cherry", createdAt: 1), Note(id: "i6", createdAt: 2),  // no title: not in byRoom
                Note(id: "i7", roomId: "r2", title: "apple"), Note(id: "i8", title: "apple", deleted: true),
                Note(id: "j1", likes: 5, mood: "HAPPY"), Note(id: "j2", likes: 10, mood: "HAPPY"),
                Note(id: "j3", likes: 10, mood: "HAPPY"), Note(id: "j4", likes: 20, mood: "HAPPY"),
                Note(id: "j5", likes: 10, mood: "SAD"), Note(id: "j6", mood: "HAPPY"),
            ])
            let byTitle: [(JSONValue?, [String])] = [
                (nil, ["i1", "i2", "i3", "i4", "i5"]),
                (["eq": "banana"], ["i3", "i4"]),
                (["lt": "banana"], ["i1", "i2"]),
                (["le": "banana"], ["i1", "i2", "i3", "i4"]),
                (["gt": "apricot"], ["i3", "i4", "i5"]),
                (["ge": "banana"], ["i3", "i4", "i5"]),
                (["between": ["apricot", "banana"]], ["i2", "i3", "i4"]),
                (["beginsWith": "ap"], ["i1", "i2"]),
            ]
            for (condition, expected) in byTitle {
                for limit in [1, 2, 10] {
                    let order = KeysetPage.Order.index("byRoom", partition: "r1", sortKey: condition)
                    #expect(try await notes.pages(order, limit: limit).flatMap { $0 } == expected, "\(String(describing: condition)), \(limit)")
                    let down = try await notes.pages(order, descending: true, limit: limit).flatMap { $0 }
                    #expect(down == Array(expected.reversed()), "\(String(describing: condition)), \(limit), descending")
                }
            }
            #expect(try await notes.pages(.index("byRoom", partition: "r2"), limit: 10) == [["i7"]])

            let byLikes: [(JSONValue?, [String])] = [
                (nil, ["j1", "j2", "j3", "j4"]),
                (["eq": 10], ["j2", "j3"]),
                (["lt": 10], ["j1"]),
                (["le": 10], ["j1", "j2", "j3"]),
                (["gt": 5], ["j2", "j3", "j4"]),
                (["ge": 20], ["j4"]),
                (["between": [10, 20]], ["j2", "j3", "j4"]),
            ]
            for (condition, expected) in byLikes {
                let order = KeysetPage.Order.index("byMood", partition: "HAPPY", sortKey: condition)
                #expect(try await notes.pages(order, limit: 1).flatMap { $0 } == expected, "\(String(describing: condition))")
            }
            // A filter narrows an index query like any other.
            let filtered = try await notes.pages(.index("byRoom", partition: "r1"), limit: 2, filter: ["title": ["contains": "an"]])
            #expect(filtered.flatMap { $0 } == ["i3", "i4"])
        }
    }

    @Test func badKeyArgumentsAndLimitsAreRefused() throws {
        let schema = try DataSchema(sdl: NotesFixture.sdl)
        let model = try #require(schema.model(named: "Note"))
        func page(_ order: KeysetPage.Order = .createdAt, limit: Int? = nil) throws(KizunaError) -> KeysetPage {
            try KeysetPage(model: model, schema: schema, table: "t", dialect: .sqlite, order: order, limit: limit, scope: "")
        }
        for limit in [0, -1] {
            let error = #expect(throws: KizunaError.self) { try page(limit: limit) }
            #expect(error?.code == .validationFailed && error?.field == "limit")
        }
        let tooLarge = #expect(throws: KizunaError.self) { try page(limit: 1001) }
        #expect(tooLarge?.code == .limitExceeded && tooLarge?.field == "limit" && tooLarge?.message.contains("1000") == true)
        #expect(try page(limit: 1000).limit == 1000)
        #expect(try page().limit == 100)
        let unknown = #expect(throws: KizunaError.self) { try page(.index("byNothing", partition: "r1")) }
        #expect(unknown?.code == .validationFailed && unknown?.field == "index")
        let cases: [(KeysetPage.Order, String)] = [
            (.index("byRoom", partition: 5), "roomId invalid_value"),
            (.index("byMood", partition: "ANGRY"), "mood invalid_value"),
            (.index("byMood", partition: "HAPPY", sortKey: ["beginsWith": "1"]), "likes.beginsWith unsupported_operator"),
            (.index("byMood", partition: "HAPPY", sortKey: ["eq": 1.5]), "likes.eq invalid_value"),
            (.index("byRoom", partition: "r1", sortKey: ["contains": "a"]), "title.contains unknown_operator"),
            (.index("byRoom", partition: "r1", sortKey: ["eq": "a", "lt": "b"]), "title wrong_type"),
        ]
        for (order, problem) in cases {
            let error = #expect(throws: KizunaError.self, "\(problem)") { try page(order) }
            #expect(error?.code == .validationFailed)
            #expect(error?.details.map { "\($0.field ?? "") \($0.code)" } == [problem])
        }
    }

    @Test(arguments: TestBackend.available)
    func aTokenPagesOnlyTheQueryThatIssuedIt(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            let notes = try await NotesFixture.make(database)
            try await notes.insert(Self.tied)
            let key = SymmetricKey(size: .bits256)
            let filter: JSONValue = ["createdAt": ["ge": "1970-01-01T00:00:01.002Z"]]
            let first = try await notes.page(limit: 5, filter: filter).run(on: database)
            let token = try #require(first.next).encoded(key: key)

            let scope = PageCursor.scope(of: ["filter": filter])
            let after = try PageCursor.decode(token, key: key, expecting: (model: "Note", order: "", descending: false, scope: scope))
            let second = try await notes.page(limit: 5, after: after, filter: filter).run(on: database)
            let seen = try (first.rows + second.rows).map { try $0.decode(column: "id", as: String.self) }
            #expect(seen == Array(Self.tied.sorted { Self.key($0) < Self.key($1) }.map(\.id)[6..<16]))

            // Another filter, another direction, another order, another key: refused.
            let otherScope = PageCursor.scope(of: ["filter": ["createdAt": ["ge": "1970-01-01T00:00:01Z"]]])
            for expecting in [
                (model: "Note", order: "", descending: false, scope: otherScope),
                (model: "Note", order: "", descending: true, scope: scope),
                (model: "Note", order: "byRoom", descending: false, scope: scope),
            ] {
                let error = #expect(throws: KizunaError.self) { try PageCursor.decode(token, key: key, expecting: expecting) }
                #expect(error?.code == .badCursor)
            }
            let foreign = #expect(throws: KizunaError.self) {
                try PageCursor.decode(
                    token, key: SymmetricKey(size: .bits256), expecting: (model: "Note", order: "", descending: false, scope: scope))
            }
            #expect(foreign?.code == .badCursor)

            // A cursor whose values do not fit the order (the schema changed under it) is refused too.
            for values in [["1002"], [1002, "n01"], ["1002", "n01", "x"]] as [[JSONValue]] {
                let misfit = PageCursor(model: "Note", order: "", descending: false, scope: scope, after: values)
                let error = #expect(throws: KizunaError.self) { try notes.page(after: misfit, filter: filter) }
                #expect(error?.code == .badCursor && error?.field == "nextToken")
            }
        }
    }
}
