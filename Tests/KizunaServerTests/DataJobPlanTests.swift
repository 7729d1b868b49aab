import Foundation
import KizunaCore
import Testing

@testable import KizunaServer

/// Which parts of a schema plan a publish leaves to jobs, which earlier jobs it cancels, and how a job's work is
/// stored: decided without a store.
@Suite("Schema job plans")
struct DataJobPlanTests {
    /// A change between two schemas and the jobs it must record (`kind Model.target`) on either engine.
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let old: String
        let new: String
        let jobs: [String]
        var testDescription: String { name }
    }

    static let message = "type Message @model { text: String! }"

    static let cases: [Case] = [
        Case(
            name: "an optional field without a default needs nothing", old: message, new: "type Message @model { text: String! editedAt: DateTime }",
            jobs: []),
        Case(
            name: "a constant default comes with the column",
            old: message, new: #"type Message @model { text: String! pinned: Boolean! @default(value: "false") kind: Int @default(value: "2") }"#,
            jobs: []),
        Case(
            name: "a DateTime default is backfilled", old: message,
            new: #"type Message @model { text: String! seenAt: DateTime! @default(value: "2025-01-31T09:00:00Z") }"#,
            jobs: ["backfill Message.seenAt"]),
        Case(
            name: "a JSON default is backfilled", old: message,
            new: #"type Message @model { text: String! meta: JSON @default(value: "{\"a\": 1}") }"#,
            jobs: ["backfill Message.meta"]),
        Case(
            name: "a field that becomes required with a default is backfilled", old: "type Message @model { text: String }",
            new: #"type Message @model { text: String! @default(value: "") }"#, jobs: ["backfill Message.text"]),
        Case(
            name: "an index on an existing model is built by a job", old: "type Message @model { roomId: ID }",
            new: #"type Message @model { roomId: ID @index(name: "byRoom") }"#, jobs: ["index Message.byRoom"]),
        Case(
            name: "a new model's indexes come with its table", old: message,
            new: message + #" type Room @model { name: String @index(name: "byName") seenAt: DateTime! @default(value: "2025-01-31T09:00:00Z") }"#,
            jobs: []),
        Case(
            name: "an index whose keys change is built again",
            old: #"type Message @model { roomId: ID @index(name: "byRoom") text: String }"#,
            new: #"type Message @model { roomId: ID @index(name: "byRoom", sortKeyFields: ["text"]) text: String }"#,
            jobs: ["index Message.byRoom"]),
    ]

    @Test(arguments: cases, [DataTables.Dialect.sqlite, .postgres])
    func jobsOfAPlan(_ change: Case, _ dialect: DataTables.Dialect) throws {
        let old = try DataSchema(sdl: change.old)
        let new = try DataSchema(sdl: change.new)
        let plan = SchemaPlan(from: old, to: new)
        let jobs = DataTables.jobs(for: plan, app: "shop", schema: new, previous: old, dialect: dialect)
        #expect(jobs.map { "\($0.work.kind) \($0.model).\($0.work.target)" } == change.jobs)
        // What a job does is never also done in the publish's transaction.
        let statements = DataTables.statements(for: plan, app: "shop", schema: new, previous: old, dialect: dialect)
        #expect(!statements.contains { $0.hasPrefix("CREATE INDEX") } || plan.changes.contains { $0.action == .createModel })
        #expect(!statements.contains { $0.contains("DEFAULT '2025") || $0.contains("JSONB DEFAULT") })
    }

    @Test func aDateTimeDefaultIsFilledInAsEpochMilliseconds() throws {
        let old = try DataSchema(sdl: Self.message)
        let new = try DataSchema(sdl: #"type Message @model { text: String! seenAt: DateTime! @default(value: "2025-01-31T18:00:00+09:00") }"#)
        let jobs = DataTables.jobs(for: SchemaPlan(from: old, to: new), app: "shop", schema: new, previous: old, dialect: .sqlite)
        #expect(jobs.map(\.work) == [.backfill(field: "seenAt", value: .integer(1_738_314_000_000))])
        #expect(jobs.map(\.table) == [DataTables.table(app: "shop", model: "Message")])
    }

    @Test func publishesCancelTheJobsOfWhatTheyDropOrChange() throws {
        let old = try DataSchema(
            sdl: #"type Message @model { roomId: ID @index(name: "byRoom") seenAt: DateTime } type Room @model { name: String }"#)
        let new = try DataSchema(sdl: #"type Message @model { roomId: ID seenAt: DateTime! @default(value: "2025-01-31T09:00:00Z") }"#)
        let superseded = DataTables.superseded(by: SchemaPlan(from: old, to: new), app: "shop")
        let message = DataTables.table(app: "shop", model: "Message")
        #expect(
            Set(superseded.map { "\($0.table) \($0.kind ?? "*") \($0.target ?? "*")" }) == [
                "\(message) backfill seenAt", "\(message) index byRoom", "\(DataTables.table(app: "shop", model: "Room")) * *",
            ])
    }

    @Test(arguments: [
        DataJob.Work.index(index: "byRoom", name: "ix_0123", columns: ["roomId", "createdAt", "id"]),
        .backfill(field: "seenAt", value: .integer(9_007_199_254_740_993)),
        .backfill(field: "title", value: .text("it's")),
        .backfill(field: "score", value: .real(1.5)),
        .backfill(field: "pinned", value: .bool(false)),
        .backfill(field: "meta", value: .json(#"{"a":[1,2]}"#)),
    ])
    func workRoundTripsThroughItsStoredForm(_ work: DataJob.Work) {
        #expect(DataJob.Work(kind: work.kind, payload: work.payload) == work)
    }

    @Test func workANewerKizunaWroteIsNotGuessed() {
        #expect(DataJob.Work(kind: "vacuum", payload: "{}") == nil)
        #expect(DataJob.Work(kind: "backfill", payload: #"{"field":"x","form":"geometry","value":"POINT(0 0)"}"#) == nil)
    }

    @Test func retriesBackOffUpToTenMinutes() {
        #expect(
            (1...10).map { DataJobRunner.retryDelay(afterAttempt: $0) } == [5, 10, 20, 40, 80, 160, 320, 600, 600, 600].map { Duration.seconds($0) })
    }
}
