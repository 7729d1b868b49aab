import KizunaCore
import SQLKit
import Testing

@testable import KizunaServer

/// A filter decided in memory (what a subscription tests each change with) selects exactly the rows its SQL selects,
/// on both engines: many generated filters over rows built to hit the edges (unset fields, case, `%` and `_`, `é`
/// precomposed and decomposed, empty text and lists, bounds, JSON documents in any key order, lists of every type).
@Suite("Data filter in memory")
struct DataFilterEvaluationTests {
    /// Lists of the types the Note fixture has none of, JSON documents among them.
    static let bagSDL = """
        enum Mood {
          HAPPY
          SAD
          CALM
        }

        type Bag @model @auth(rules: [{ allow: public }]) {
          docs: [JSON]
          flags: [Boolean]
          ratios: [Float]
          days: [DateTime]
          moods: [Mood]
          names: [ID]
        }
        """

    @Test(arguments: TestBackend.available)
    func everyScalarTypeIsDecidedAsTheSQLDecides(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            let notes = try await NotesFixture.make(database)
            var random = SplitMix(seed: 0x6B69_7A75_6E61)
            try await notes.insert((0..<48).map { FilterSamples.note($0, using: &random) })
            let sample = SampleTable(database: database, schema: notes.schema, model: notes.model, table: notes.table, dialect: notes.dialect)
            var generator = FilterSamples(model: notes.model, codePointOrder: try await sample.ordersTextByCodePoint(), random: random)
            try await sample.compare(500, from: &generator)
        }
    }

    @Test(arguments: TestBackend.available)
    func listsOfEveryTypeAreDecidedAsTheSQLDecides(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            let sample = try await SampleTable.make(Self.bagSDL, model: "Bag", on: database)
            var random = SplitMix(seed: 0x6261_6773)
            for index in 0..<40 {
                var lists: [String: [StoredValue]?] = [:]
                for field in sample.model.fields where field.isList {
                    lists[field.name] = FilterSamples.list(of: field.type, using: &random)
                }
                try await sample.insert(id: (index < 10 ? "b0" : "b") + String(index), lists: lists)
            }
            var generator = FilterSamples(model: sample.model, codePointOrder: true, random: random)
            try await sample.compare(400, from: &generator)
        }
    }

    /// The edges, spelled out (the generated test checks them against the engines).
    @Test func unsetFieldsBytesAndNegations() throws {
        let schema = try DataSchema(sdl: NotesFixture.sdl)
        let model = try #require(schema.model(named: "Note"))
        func matches(_ filter: JSONValue, _ record: [String: JSONValue], _ dialect: DataTables.Dialect = .sqlite) throws -> Bool {
            try DataFilter(filter, model: model, schema: schema, table: "t", dialect: dialect).matches(record)
        }
        let unset: [String: JSONValue] = ["id": "a"]
        #expect(try matches(["title": ["ne": "x"]], unset))
        #expect(try matches(["tags": ["notContains": "x"]], unset))
        #expect(try !matches(["title": ["eq": "x"]], unset))
        #expect(try !matches(["likes": ["lt": 1]], unset))
        #expect(try matches(["not": ["done": ["eq": true]]], unset))
        #expect(try !matches(["not": [:]], unset))
        #expect(try !matches(["title": ["beginsWith": ""]], unset))
        // Swift's `==` calls these equal; SQL compares bytes.
        let decomposed: [String: JSONValue] = ["title": "cafe\u{301}"]
        #expect(try !matches(["title": ["eq": "caf\u{E9}"]], decomposed))
        #expect(try matches(["title": ["contains": "\u{301}"]], decomposed))
        #expect(try matches(["title": ["beginsWith": ""]], decomposed))
        #expect(try matches(["likes": ["between": [1, 1]]], ["likes": 1]))
        #expect(try !matches(["likes": ["between": [2, 1]]], ["likes": 1]))
        #expect(try matches(["title": ["lt": "a"]], ["title": "Z"]))
        // JSONB compares documents whatever their keys' order; so does SQLite once the write stored them canonically.
        let meta: [String: JSONValue] = ["meta": ["n": 1, "k": "v"]]
        #expect(try matches(["meta": ["eq": #"{"k":"v","n":1}"#]], meta, .postgres))
        #expect(try matches(["meta": ["eq": ["k": "v", "n": 1]]], meta))
    }
}

/// One model's table under test: the rows SQL selects, and the same rows in the stored form a change carries.
struct SampleTable {
    let database: KizunaDatabase
    let schema: DataSchema
    let model: DataModel
    let table: String
    let dialect: DataTables.Dialect

    /// The table of `model` in `sdl`, made by the schema's own DDL.
    static func make(_ sdl: String, model name: String, on database: KizunaDatabase) async throws -> SampleTable {
        let schema = try DataSchema(sdl: sdl)
        let dialect = DataTables.Dialect(database)
        for statement in DataTables.statements(
            for: SchemaPlan(from: .empty, to: schema), app: "samples", schema: schema, previous: .empty, dialect: dialect)
        {
            try await database.raw(SQLQueryString(statement)).run()
        }
        let model = try #require(schema.model(named: name))
        return SampleTable(
            database: database, schema: schema, model: model, table: DataTables.table(app: "samples", model: name), dialect: dialect)
    }

    /// Inserts a record with the automatic fields fixed and each list as a write stores it (`nil`: unset).
    func insert(id: String, lists: [String: [StoredValue]?]) async throws {
        var columns = ["id", "createdAt", "updatedAt", "_version", DataTables.deletedColumn, DataTables.seqColumn]
        var values: [any SQLExpression] = [
            SQLBind(id), SQLBind(Int64(1_000)), SQLBind(Int64(1_000)), SQLBind(Int64(1)), SQLBind(false), SQLBind(Int64(1)),
        ]
        for (name, list) in lists {
            columns.append(name)
            guard let list else {
                values.append(SQLLiteral.null)
                continue
            }
            values.append(DataWrite.bind(.json("[" + list.map(\.jsonElement).joined(separator: ",") + "]"), dialect: dialect))
        }
        try await database.raw("INSERT INTO \(ident: table) (\(idents: columns, joinedBy: ", ")) VALUES (\(SQLList(values)))").run()
    }

    /// Runs `count` generated filters both ways, recording each that the two decide differently (the first five).
    func compare(_ count: Int, from generator: inout FilterSamples) async throws {
        let records = try await self.records()
        var mismatches = 0
        for _ in 0..<count where mismatches < 5 {
            let filter = generator.filter(depth: 1)
            let compiled = try DataFilter(filter, model: model, schema: schema, table: table, dialect: dialect)
            let condition: any SQLExpression = compiled.condition ?? SQLLiteral.boolean(true)
            let rows = try await database.raw("SELECT \(ident: "id") FROM \(ident: table) WHERE \(condition)").all()
            let selected = Set(try rows.map { try $0.decode(column: "id", as: String.self) })
            let matched = Set(records.filter { compiled.matches($0.value) }.keys)
            guard matched != selected else { continue }
            mismatches += 1
            let differing = matched.symmetricDifference(selected).sorted()
            let shown = differing.prefix(3).map { "\($0): \(StoredValue.jsonText(.object(records[$0] ?? [:])))" }
            Issue.record("\(StoredValue.jsonText(filter)) differs on \(differing): SQL \(selected.sorted()); rows \(shown)")
        }
    }

    /// Every row in the stored form a change carries, by id.
    func records() async throws -> [String: [String: JSONValue]] {
        var records: [String: [String: JSONValue]] = [:]
        for row in try await database.raw("SELECT * FROM \(ident: table)").all() {
            let record = try DataRecords.stored(row, model: model)
            records[record["id"]?.stringValue ?? ""] = record
        }
        return records
    }

    /// Whether the store orders text by code point: SQLite's `BINARY` always, PostgreSQL under a C-like collation.
    func ordersTextByCodePoint() async throws -> Bool {
        guard dialect == .postgres else { return true }
        let row = try await database.raw("SELECT datcollate AS collation FROM pg_database WHERE datname = current_database()").first()
        let collation = try row?.decode(column: "collation", as: String.self) ?? ""
        return ["C", "POSIX", "C.UTF-8", "C.utf8", "ucs_basic"].contains(collation)
    }
}

/// A small, seeded generator (SplitMix64), so a failing filter is the same filter on the next run.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Rows of the Note fixture and filters over them, drawn from values that sit on the edges of each operator.
struct FilterSamples {
    static let t0: Int64 = 1_738_314_000_000
    static let texts = [
        "", "Hello World", "hello world", "Hello", "hello", "100% off_sale", "100 percent offXsale", "caf\u{E9}", "cafe\u{301}", "Zebra",
        "apple", "a_b", "a%b", "abc", "ab", "B", "b", "日本", "Ünïcode",
    ]
    static let textOperands = texts + ["He", "hel", "world", "World", "%", "_", "o W", "caf", "\u{301}", "e", "Z", "a", "100", "\u{E9}"]
    static let rooms = ["r1", "r2", "R1", "r10"]
    static let ints: [Int64] = [-5, 0, 1, 10, 20, 9_007_199_254_740_992]
    static let intOperands: [Int64] = ints + [2, 15, -9_007_199_254_740_992]
    static let floats: [Double] = [-1, 0, 0.1, 1.5, 2.5, 1e10]
    static let floatOperands: [Double] = floats + [2, 3, -0.5]
    static let instants: [Int64] = [t0, t0 + 500, t0 + 86_400_000, t0 - 1]
    static let instantOperands: [Int64] = instants + [t0 + 1, 1_000]
    static let moods = ["HAPPY", "SAD", "CALM"]
    static let moodPrefixes = ["HA", "S", "", "C", "h", "CALM", "CALMER"]
    static let tags: [[String]] = [[], ["red", "blue"], ["Red"], ["green"], ["red", "red"], ["caf\u{E9}"], ["cafe\u{301}", "x"]]
    static let tagOperands = ["red", "Red", "blue", "caf\u{E9}", "cafe\u{301}", "", "x", "%"]
    static let sizes: [[Int64]] = [[], [1, 2, 3], [2], [4], [2, 2]]
    static let documents: [JSONValue] = [
        ["k": "v", "n": 1], ["k": "w"], [1, 2], "text", 1, true, ["a": [1, 2], "b": ["c": .null]], [], ["n": 1.5],
    ]
    static let documentOperands: [JSONValue] = documents + [["n": 1, "k": "v"], [2, 1], ["k": "v"], "Text", 1.0, false]

    let fields: [DataField]
    let codePointOrder: Bool
    var random: SplitMix

    init(model: DataModel, codePointOrder: Bool, random: SplitMix) {
        fields = model.fields.filter { $0.name != "updatedAt" && $0.name != "_version" }
        self.codePointOrder = codePointOrder
        self.random = random
    }

    /// Note `index`, each field unset about one time in five.
    static func note(_ index: Int, using random: inout SplitMix) -> NotesFixture.Note {
        func some<T>(_ values: [T]) -> T? { Int.random(in: 0..<5, using: &random) == 0 ? nil : values.randomElement(using: &random) }
        var note = NotesFixture.Note(id: (index < 10 ? "n0" : "n") + String(index))
        note.roomId = rooms.randomElement(using: &random) ?? "r1"
        note.title = some(texts)
        note.likes = some(ints)
        note.score = some(floats)
        note.done = some([true, false])
        note.dueAt = some(instants)
        note.mood = some(moods)
        // Lists and JSON as a write stores them: each element in its stored form, a document canonical.
        note.tags = some(tags).map { list in "[" + list.map { StoredValue.text($0).jsonElement }.joined(separator: ",") + "]" }
        note.sizes = some(sizes).map { list in "[" + list.map { StoredValue.integer($0).jsonElement }.joined(separator: ",") + "]" }
        note.meta = some(documents).map(StoredValue.jsonText)
        note.createdAt = Int64(1_000 + (index % 7) * 250)
        return note
    }

    /// A list of up to three elements of `type` in their stored form, or `nil` (unset) about one time in five.
    static func list(of type: FieldType, using random: inout SplitMix) -> [StoredValue]? {
        guard Int.random(in: 0..<5, using: &random) > 0 else { return nil }
        return (0..<Int.random(in: 0...3, using: &random)).map { _ -> StoredValue in
            switch type {
            case .scalar(.id): return .text(rooms[Int.random(in: 0..<rooms.count, using: &random)])
            case .scalar(.string): return .text(texts[Int.random(in: 0..<texts.count, using: &random)])
            case .scalar(.int): return .integer(ints[Int.random(in: 0..<ints.count, using: &random)])
            case .scalar(.float): return .real(floats[Int.random(in: 0..<floats.count, using: &random)])
            case .scalar(.boolean): return .bool(Bool.random(using: &random))
            case .scalar(.dateTime): return .integer(instants[Int.random(in: 0..<instants.count, using: &random)])
            case .enumeration: return .text(moods[Int.random(in: 0..<moods.count, using: &random)])
            case .scalar(.json): return .json(StoredValue.jsonText(documents[Int.random(in: 0..<documents.count, using: &random)]))
            }
        }
    }

    /// A filter of up to two field conditions, with `and`, `or` and `not` nested up to four levels.
    mutating func filter(depth: Int) -> JSONValue {
        var object: [String: JSONValue] = [:]
        for _ in 0..<Int.random(in: 0...2, using: &random) {
            let field = pick(fields)
            let allowed = operators(of: field)
            guard !allowed.isEmpty else { continue }
            let op = pick(allowed)
            var tests = object[field.name]?.objectValue ?? [:]
            tests[op.rawValue] = operand(op, of: field)
            object[field.name] = .object(tests)
        }
        if depth < 4 {
            if chance(4) { object["and"] = .array((0..<Int.random(in: 1...3, using: &random)).map { _ in filter(depth: depth + 1) }) }
            if chance(4) { object["or"] = .array((0..<Int.random(in: 1...3, using: &random)).map { _ in filter(depth: depth + 1) }) }
            if chance(5) { object["not"] = filter(depth: depth + 1) }
        }
        return .object(object)
    }

    private mutating func chance(_ oneIn: Int) -> Bool {
        Int.random(in: 0..<oneIn, using: &random) == 0
    }

    private func operators(of field: DataField) -> [FilterOperator] {
        let ordering: Set<FilterOperator> = [.lt, .le, .gt, .ge, .between]
        let isText = field.type == .scalar(.string) || field.type == .scalar(.id)
        return FilterOperator.supported(by: field).filter { codePointOrder || !isText || !ordering.contains($0) }
    }

    private mutating func operand(_ op: FilterOperator, of field: DataField) -> JSONValue {
        switch op {
        case .attributeExists: return .bool(chance(2))
        case .between: return [scalar(field), scalar(field)]
        case .in, .notIn: return .array((0..<Int.random(in: 1...4, using: &random)).map { _ in scalar(field) })
        case .beginsWith:
            if case .enumeration = field.type { return .string(pick(Self.moodPrefixes)) }
            return .string(pick(Self.textOperands))
        case .contains, .notContains:
            guard field.isList else { return .string(pick(Self.textOperands)) }
            return element(field)
        case .eq, .ne:
            guard field.isList else { return scalar(field) }
            return .array((0..<Int.random(in: 0...2, using: &random)).map { _ in element(field) })
        case .lt, .le, .gt, .ge: return scalar(field)
        }
    }

    /// An element of a list field, as a filter's `contains` or a whole list's `eq` gives it.
    private mutating func element(_ field: DataField) -> JSONValue {
        switch field.name {
        case "tags": return .string(pick(Self.tagOperands))
        case "sizes": return .number(Double(pick(Self.sizes.flatMap { $0 } + [5])))
        default: return scalar(field)
        }
    }

    private mutating func scalar(_ field: DataField) -> JSONValue {
        switch field.type {
        case .scalar(.id):
            return .string(field.name == "id" ? pick(["n00", "n1", "n17", "n47", "b00", "b7", "b39", "m", ""]) : pick(Self.rooms + ["r"]))
        case .scalar(.string): return .string(pick(Self.textOperands))
        case .scalar(.int): return .number(Double(pick(Self.intOperands)))
        case .scalar(.float): return .number(pick(Self.floatOperands))
        case .scalar(.boolean): return .bool(chance(2))
        case .scalar(.dateTime):
            let instants = field.name == "createdAt" ? [1_000, 1_250, 1_500, 2_500, 999] : Self.instantOperands
            return .string(StoredValue.isoText(pick(instants)))
        case .enumeration: return .string(pick(Self.moods))
        case .scalar(.json):
            // AWSJSON: a string holding JSON, or the value itself (a string document can only be sent as the former).
            let document = pick(Self.documentOperands)
            if case .string = document { return .string(StoredValue.jsonText(document)) }
            return chance(2) ? .string(StoredValue.jsonText(document)) : document
        }
    }

    private mutating func pick<T>(_ values: [T]) -> T {
        values[Int.random(in: 0..<values.count, using: &random)]
    }
}
