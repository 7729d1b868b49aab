import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import SQLKit
import Synchronization
import Testing

@testable import KizunaServer

/// Additive schema changes on a table that already holds many records: the publish records jobs and returns, the
/// jobs build the index and fill the default in committed steps while the API answers, and a later publish cancels
/// what it makes pointless.
@Suite("Schema jobs")
struct DataJobTests {
    static let rows = 200_000

    static let items = """
        type Item @model @auth(rules: [{ allow: private }]) {
          name: String!
          rank: Int
        }
        """

    /// An index on the existing model and a required DateTime with a default: both left to jobs.
    static let itemsIndexedAndSeen = items.replacingOccurrences(
        of: "  name: String!\n", with: "  name: String! @index(name: \"byName\")\n  seenAt: DateTime! @default(value: \"2025-01-31T09:00:00Z\")\n")

    /// `seenAt` only: one backfill job.
    static let itemsSeen = items.replacingOccurrences(
        of: "  rank: Int\n", with: "  rank: Int\n  seenAt: DateTime! @default(value: \"2025-01-31T09:00:00Z\")\n")

    static let seenAt = "2025-01-31T09:00:00.000Z"
    static let seenAtMillis: Int64 = 1_738_314_000_000

    @Test(arguments: TestBackend.available)
    func anAdditiveChangeOnABigTableIsLeftToJobsWhileQueriesAnswer(_ backend: TestBackend) async throws {
        let (events, seen) = AsyncStream.makeStream(of: DataJobInfo.self)
        let hold = Hold()
        try await withTestServer(
            backend,
            configure: {
                $0.passwordParameters = .init(logN: 10, r: 8, p: 1)
                $0.dataJobs.observer = { job in
                    seen.yield(job)
                    await hold.wait()  // until the test lets the jobs go on
                }
            }
        ) { server in
            try await releasing(hold) {
                #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
                #expect(try await DataSchemaPublishingTests.publish(server, Self.items).status == .ok)
                let table = DataTables.table(app: "shop", model: "Item")
                try await Self.fill(server.database, table: table, rows: Self.rows)
                let user = try await GraphQLEndpointTests.signUp(server, "ann@example.com")

                // The publish records the work and does none of it.
                let published = try await DataSchemaPublishingTests.publish(server, Self.itemsIndexedAndSeen)
                #expect(published.status == .ok, "\(published.text)")
                let recorded = try await Self.jobs(server)
                #expect(recorded.map(\.kind).sorted() == ["backfill", "index"])
                #expect(recorded.allSatisfy { $0.schemaVersion == 2 && !$0.isFinished })
                let indexName = DataTables.indexName(table: table, index: "byName")
                #expect(try await Self.index(indexName, in: server.database) == nil)

                // The backfill committed its first batch and waits there; the index waits behind it.
                var updates = events.makeAsyncIterator()
                let first = try #require(await updates.next())
                #expect(first.kind == "backfill" && first.state == "running" && first.done == 1_000 && first.total == Int64(Self.rows))
                #expect(try await Self.nullCount(server.database, table) == Self.rows - 1_000)
                // Records the backfill has not reached read the default; the API answers while the job is not done.
                let midway = try await Self.seenAtOfFirstPage(server, token: user.token)
                #expect(midway == Array(repeating: Self.seenAt, count: 50))
                #expect(try await Self.jobs(server).first { $0.kind == "backfill" }?.state == "running")
                #expect(try await Self.index(indexName, in: server.database) == nil)
                await hold.open()

                // Readers keep asking, by page and by the name the new index serves, while both jobs run to the end.
                let finished = Latch()
                let answered = try await withThrowingTaskGroup(of: Int.self) { group -> Int in
                    group.addTask {
                        var answered = 0
                        while !finished.isSet {
                            #expect(try await Self.seenAtOfFirstPage(server, token: user.token) == Array(repeating: Self.seenAt, count: 50))
                            let named = try await GraphQLEndpointTests.graphQL(
                                server, #"{ listItemsByName(name: "Item 7") { items { id seenAt } } }"#, token: user.token)
                            #expect(named.body["data"]?["listItemsByName"]?["items"] == [["id": "item-7", "seenAt": .string(Self.seenAt)]])
                            answered += 1
                        }
                        return answered
                    }
                    var done: Set<String> = []
                    while done != ["backfill", "index"], let update = await updates.next() {
                        #expect(update.state != "failed" && update.state != "cancelled", "\(update.error ?? "")")
                        if update.state == "done" { done.insert(update.kind) }
                    }
                    finished.set()
                    return try await group.next() ?? 0
                }
                #expect(answered >= 1)

                // Every record has the default, none was lost, and the index exists with its columns.
                #expect(try await Self.nullCount(server.database, table) == 0)
                #expect(try await Self.count(server.database, table, where: "\(ident: "seenAt") = \(bind: Self.seenAtMillis)") == Self.rows)
                #expect(try await Self.count(server.database, table) == Self.rows)
                #expect(try await Self.index(indexName, in: server.database) == IndexState(valid: true, columns: ["name", "id"]))
                let final = try await Self.jobs(server)
                #expect(final.allSatisfy { $0.state == "done" && $0.error == nil && $0.finishedAt != nil })
                #expect(final.first { $0.kind == "backfill" }?.done == Int64(Self.rows))
            }
        }
    }

    @Test(arguments: TestBackend.available)
    func aLaterPublishCancelsWhatItSupersedes(_ backend: TestBackend) async throws {
        let (events, seen) = AsyncStream.makeStream(of: DataJobInfo.self)
        let hold = Hold()
        try await withTestServer(
            backend,
            configure: {
                $0.migrationBatchSize = 10
                $0.dataJobs.observer = { job in
                    seen.yield(job)
                    await hold.wait()
                }
            }
        ) { server in
            try await releasing(hold) {
                #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
                #expect(try await DataSchemaPublishingTests.publish(server, Self.items).status == .ok)
                let table = DataTables.table(app: "shop", model: "Item")
                try await Self.fill(server.database, table: table, rows: 100)

                // v2 adds seenAt: its backfill stops after one batch of ten.
                #expect(try await DataSchemaPublishingTests.publish(server, Self.itemsSeen).status == .ok)
                var updates = events.makeAsyncIterator()
                let first = try #require(await updates.next())
                #expect(first.kind == "backfill" && first.done == 10)

                // v3 drops seenAt: the job is cancelled in the publish's transaction, and stays so once the runner goes on.
                #expect(try await DataSchemaPublishingTests.publish(server, Self.items, query: "?allowDestructive=true").status == .ok)
                let cancelled = try #require(try await Self.jobs(server).first)
                #expect(cancelled.id == first.id && cancelled.state == "cancelled" && cancelled.error?.contains("Schema version 3") == true)
                await hold.open()
                let after = try #require(await updates.next())
                #expect(after.id == first.id && after.state == "cancelled")
                #expect(try await DataSchemaPublishingTests.columns(server.database, table).contains("seenAt") == false)

                // v4 adds it again: a new job fills every record.
                #expect(try await DataSchemaPublishingTests.publish(server, Self.itemsSeen).status == .ok)
                while let update = await updates.next(), update.state != "done" {
                    #expect(update.id != first.id && update.state == "running")
                }
                #expect(try await Self.nullCount(server.database, table) == 0)
                let jobs = try await Self.jobs(server)
                #expect(jobs.map(\.state) == ["done", "cancelled"] && jobs.map(\.schemaVersion) == [4, 2])
            }
        }
    }

    @Test(arguments: TestBackend.available)
    func anIndexBuildLeftByADeadServerIsTakenOverAndRebuilt(_ backend: TestBackend) async throws {
        let (events, seen) = AsyncStream.makeStream(of: DataJobInfo.self)
        try await withTestServer(
            backend,
            configure: {
                $0.dataJobs.pollInterval = .milliseconds(50)
                $0.dataJobs.observer = { seen.yield($0) }
            }
        ) { server in
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            #expect(try await DataSchemaPublishingTests.publish(server, Self.items).status == .ok)
            let table = DataTables.table(app: "shop", model: "Item")
            try await Self.fill(server.database, table: table, rows: 1_000)
            let name = DataTables.indexName(table: table, index: "byName")
            if server.database.engine == .postgres {
                // What a build killed mid-way leaves: an INVALID index under the name (here a unique one that failed).
                await #expect(throws: (any Error).self) {
                    try await server.database.raw("CREATE UNIQUE INDEX CONCURRENTLY \(ident: name) ON \(ident: table) (\(ident: "_version"))").run()
                }
                #expect(try await Self.index(name, in: server.database) == IndexState(valid: false, columns: ["_version"]))
            }

            // A job another instance claimed and stopped answering for: its lease ran out long ago.
            let job = DataTables.PlannedJob(
                model: "Item", table: table, work: .index(index: "byName", name: name, columns: ["name", "id"]))
            try await server.database.transaction { db -> Void in
                try await DataJobQueue.record([job], app: "shop", version: 1, on: db)
                try await db.raw(
                    "UPDATE data_jobs SET state = 'running', lease_owner = 'a-dead-server', lease_expires_at = 1, attempts = 1, started_at = 1"
                ).run()
            }
            let update = try #require(await events.first { _ in true })
            #expect(update.state == "done" && update.attempts == 2, "\(update.error ?? "")")
            #expect(try await Self.index(name, in: server.database) == IndexState(valid: true, columns: ["name", "id"]))
        }
    }

    // MARK: Helpers

    /// Inserts `rows` records straight in SQL: ids `item-1`…, names `Item 1`…, one millisecond apart.
    static func fill(_ database: KizunaDatabase, table: String, rows: Int) async throws {
        try await database.transaction { db in
            try await db.raw(
                """
                INSERT INTO \(ident: table) ("id", "name", "rank", "createdAt", "updatedAt", "_version", "_seq")
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(unsafeRaw: String(rows)))
                SELECT 'item-' || i, 'Item ' || i, i, 1700000000000 + i, 1700000000000 + i, 1, 1 FROM n
                """
            ).run()
        }
    }

    static func jobs(_ server: TestServer) async throws -> [DataJobInfo] {
        try await server.send(.get, "/v1/admin/apps/shop/schema/jobs").decode(DataJobList.self).jobs
    }

    /// `seenAt` of the first 50 items by creation: the records the backfill, in id order, reaches last.
    static func seenAtOfFirstPage(_ server: TestServer, token: String) async throws -> [String] {
        let answer = try await GraphQLEndpointTests.graphQL(server, "{ listItems(limit: 50) { items { seenAt } } }", token: token)
        #expect(answer.status == .ok && answer.body["errors"] == nil, "\(answer.body)")
        return answer.body["data"]?["listItems"]?["items"]?.arrayValue?.compactMap { $0["seenAt"]?.stringValue } ?? []
    }

    static func count(_ database: KizunaDatabase, _ table: String, where condition: SQLQueryString = "1 = 1") async throws -> Int {
        try await database.raw("SELECT COUNT(*) AS n FROM \(ident: table) WHERE \(condition)").first()?.decode(column: "n", as: Int.self) ?? -1
    }

    static func nullCount(_ database: KizunaDatabase, _ table: String) async throws -> Int {
        try await count(database, table, where: "\(ident: "seenAt") IS NULL")
    }

    struct IndexState: Equatable {
        var valid: Bool
        var columns: [String]
    }

    /// The index `name` as the catalog describes it, or `nil` when there is none.
    static func index(_ name: String, in database: KizunaDatabase) async throws -> IndexState? {
        if database.engine == .postgres {
            let rows = try await database.raw(
                """
                SELECT i.indisvalid AS valid, a.attname::text AS name FROM pg_index i
                CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
                JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
                WHERE i.indexrelid = to_regclass(\(bind: DataTables.quoted(name))) ORDER BY k.ord
                """
            ).all()
            guard let first = rows.first else { return nil }
            return IndexState(
                valid: try first.decode(column: "valid", as: Bool.self), columns: try rows.map { try $0.decode(column: "name", as: String.self) })
        }
        guard try await database.raw("SELECT name FROM sqlite_master WHERE type = 'index' AND name = \(bind: name)").first() != nil else {
            return nil
        }
        let columns = try await database.raw("SELECT name FROM pragma_index_info(\(bind: name)) ORDER BY seqno").all()
            .map { try $0.decode(column: "name", as: String.self) }
        return IndexState(valid: true, columns: columns)
    }
}

/// Runs `body`, then opens `hold` however `body` ended: a failed test must not leave the job runner waiting when the
/// server shuts down.
func releasing(_ hold: Hold, _ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch {
        await hold.open()
        throw error
    }
    await hold.open()
}

/// Holds whoever waits until opened; after that, lets everyone through.
actor Hold {
    private var isOpen = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func wait() async {
        guard !isOpen else { return }
        await withCheckedContinuation { waiting.append($0) }
    }

    func open() {
        isOpen = true
        for waiter in waiting { waiter.resume() }
        waiting = []
    }
}

/// A flag one task sets and another reads.
final class Latch: Sendable {
    private let value = Atomic(false)
    var isSet: Bool { value.load(ordering: .acquiring) }
    func set() { value.store(true, ordering: .releasing) }
}
