import Foundation
import KizunaCore
import SQLKit
import Synchronization
import Testing

@testable import KizunaServer

@Suite("Migrations")
struct MigrationRunnerTests {
    @Test(arguments: TestBackend.available)
    func freshStoreMigratesOnceAndReportsStatus(_ backend: TestBackend) async throws {
        try await withTestStore(backend) { store in
            let database = try store.open()
            let runner = MigrationRunner(database: database)

            let before = try await runner.status()
            #expect(before.currentVersion == 0 && before.pending.map(\.name) == CoreMigrations.all.map(\.name))

            let after = try await runner.migrate()
            #expect(after.currentVersion == runner.latestVersion && !after.needsMigration && after.writtenBy == KizunaVersion.current)

            // Running again changes nothing.
            try await runner.migrate()
            let applied = try await database.raw("SELECT COUNT(*) AS n FROM kizuna_migrations").first()?.decode(column: "n", as: Int.self)
            #expect(applied == CoreMigrations.all.count)
            await database.shutdown()
        }
    }

    @Test(arguments: TestBackend.available)
    func storeFromNewerKizunaIsRefusedAndLeftUntouched(_ backend: TestBackend) async throws {
        try await withTestStore(backend) { store in
            let database = try await store.openMigrated()
            try await database.raw("INSERT INTO kizuna_migrations VALUES (99, 'future', 0, '9.0.0')").run()
            let snapshot = try await Self.snapshot(database)

            let runner = MigrationRunner(database: database)
            for attempt in 0..<2 {
                let error = await #expect(throws: KizunaError.self) {
                    if attempt == 0 { _ = try await runner.status() } else { try await runner.migrate() }
                }
                #expect(error?.code == .storeTooNew)
                #expect(error?.message.contains("Kizuna 9.0.0") == true)
                #expect(error?.message.contains("schema version 99") == true)
            }
            let serverError = await #expect(throws: KizunaError.self) {
                _ = try await buildApplication(configuration: KizunaConfiguration(database: store.location))
            }
            #expect(serverError?.code == .storeTooNew)
            #expect(try await Self.snapshot(database) == snapshot)
            await database.shutdown()
        }
    }

    @Test(arguments: TestBackend.available)
    func interruptedDataStepResumesWithEveryRowDoneOnce(_ backend: TestBackend) async throws {
        try await withTestStore(backend) { store in
            let database = try store.open()
            let rows = 1_000
            try await MigrationRunner(database: database, steps: [Self.itemsTable(rows: rows)]).migrate()

            // The third batch fails: what the first two committed must survive, and the rerun must not redo it.
            let failOnBatch = FailSwitch(3)
            let steps = [Self.itemsTable(rows: rows), Self.visitEveryItem(failOnBatch: failOnBatch)]
            let progress = Mutex<[MigrationProgress]>([])
            await #expect(throws: InjectedFailure.self) {
                try await MigrationRunner(database: database, steps: steps).migrate(batchSize: 100) { p in progress.withLock { $0.append(p) } }
            }
            #expect(progress.withLock { $0.map(\.done) } == [100, 200])
            let midway = try #require(try await MigrationRunner(database: database, steps: steps).status().pending.first)
            #expect(midway.done == 200 && midway.total == rows)

            failOnBatch.batch.withLock { $0 = nil }
            let done = try await MigrationRunner(database: database, steps: steps).migrate(batchSize: 100)
            #expect(!done.needsMigration)
            let visits = try await database.raw("SELECT visits, COUNT(*) AS n FROM items GROUP BY visits").all()
                .map { (try $0.decode(column: "visits", as: Int.self), try $0.decode(column: "n", as: Int.self)) }
            #expect(visits.count == 1 && visits.first?.0 == 1 && visits.first?.1 == rows)
            await database.shutdown()
        }
    }

    @Test(arguments: TestBackend.available)
    func concurrentRunnersApplyEachStepOnce(_ backend: TestBackend) async throws {
        try await withTestStore(backend) { store in
            let first = try store.open()
            let second = try store.open()
            let steps = [Self.itemsTable(rows: 500), Self.visitEveryItem(failOnBatch: FailSwitch(nil))]
            async let a = MigrationRunner(database: first, steps: steps).migrate(batchSize: 50)
            async let b = MigrationRunner(database: second, steps: steps).migrate(batchSize: 50)
            let (statusA, statusB) = try await (a, b)
            #expect(!statusA.needsMigration && !statusB.needsMigration)
            let wrong = try await first.raw("SELECT COUNT(*) AS n FROM items WHERE visits <> 1").first()?.decode(column: "n", as: Int.self)
            #expect(wrong == 0)
            let applied = try await first.raw("SELECT COUNT(*) AS n FROM kizuna_migrations").first()?.decode(column: "n", as: Int.self)
            #expect(applied == 2)
            await first.shutdown()
            await second.shutdown()
        }
    }

    // MARK: Fixtures

    struct InjectedFailure: Error {}

    /// Which batch call fails, if any.
    final class FailSwitch: Sendable {
        let batch: Mutex<Int?>
        init(_ batch: Int?) { self.batch = Mutex(batch) }
    }

    static func itemsTable(rows: Int) -> MigrationStep {
        MigrationStep(
            version: 1, name: "items",
            work: .schema { db in
                try await db.raw("CREATE TABLE items (id TEXT PRIMARY KEY, visits INTEGER NOT NULL)").run()
                for start in stride(from: 0, to: rows, by: 250) {
                    let values = (start..<min(start + 250, rows)).map { String(format: "('item-%06d', 0)", $0) }.joined(separator: ", ")
                    try await db.raw("INSERT INTO items (id, visits) VALUES \(unsafeRaw: values)").run()
                }
            })
    }

    /// A data step that adds one to `visits` of every row: any row done twice or skipped shows.
    static func visitEveryItem(failOnBatch: FailSwitch) -> MigrationStep {
        let calls = Mutex(0)
        return MigrationStep(
            version: 2, name: "visit-items",
            work: .batched(
                BatchedWork(
                    prepare: { _ in },
                    count: { db in try await db.raw("SELECT COUNT(*) AS n FROM items").first()!.decode(column: "n", as: Int.self) },
                    batch: { db, checkpoint, limit in
                        let call = calls.withLock {
                            $0 += 1; return $0
                        }
                        let ids = try await db.raw("SELECT id FROM items WHERE id > \(bind: checkpoint ?? "") ORDER BY id LIMIT \(bind: limit)")
                            .all().map { try $0.decode(column: "id", as: String.self) }
                        guard let last = ids.last else { return nil }
                        try await db.raw("UPDATE items SET visits = visits + 1 WHERE id > \(bind: checkpoint ?? "") AND id <= \(bind: last)").run()
                        if failOnBatch.batch.withLock({ $0 == call }) { throw InjectedFailure() }
                        return BatchOutcome(checkpoint: last, visited: ids.count)
                    },
                    finish: { _ in }
                )))
    }

    static func snapshot(_ database: KizunaDatabase) async throws -> [String] {
        try await database.raw("SELECT version, name, applied_at, kizuna_version FROM kizuna_migrations ORDER BY version").all().map {
            "\(try $0.decode(column: "version", as: Int.self)) \(try $0.decode(column: "name", as: String.self)) "
                + "\(try $0.decode(column: "applied_at", as: Int64.self)) \(try $0.decode(column: "kizuna_version", as: String.self))"
        }
    }
}
