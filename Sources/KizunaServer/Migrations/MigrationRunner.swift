import Foundation
import KizunaCore
import Logging
import SQLKit

/// Applies ``MigrationStep``s to a store and reports where it stands.
///
/// Bookkeeping lives in two tables: `kizuna_migrations` (one row per applied step, with the Kizuna version that
/// applied it) and `kizuna_migration_progress` (the checkpoint of a data step under way). Every transaction first
/// takes a PostgreSQL advisory lock and re-reads the bookkeeping, so several instances starting at once apply each
/// step exactly once.
package struct MigrationRunner: Sendable {
    /// The steps this binary knows, in version order.
    package let steps: [MigrationStep]
    private let database: KizunaDatabase
    private let logger: Logger

    /// Creates a runner for a store.
    /// - Parameters:
    ///   - database: The store.
    ///   - steps: Steps in increasing version order; defaults to Kizuna's own.
    package init(database: KizunaDatabase, steps: [MigrationStep] = CoreMigrations.all, logger: Logger = Logger(label: "kizuna.migrations")) {
        precondition(zip(steps, steps.dropFirst()).allSatisfy { $0.version < $1.version }, "migration steps must increase")
        self.database = database
        self.steps = steps
        self.logger = logger
    }

    /// The highest step this binary knows.
    package var latestVersion: Int { steps.last?.version ?? 0 }

    /// Reads where the store stands without changing it.
    /// - Throws: `store_too_new` when a newer Kizuna wrote the store.
    package func status() async throws -> MigrationStatus {
        if case .sqlite(let path) = database.location, !FileManager.default.fileExists(atPath: path) {
            return MigrationStatus(
                storeExists: false,
                currentVersion: 0,
                latestVersion: latestVersion,
                writtenBy: nil,
                pending: steps.map { .init(version: $0.version, name: $0.name, kind: $0.kind) }
            )
        }
        return try await database.withSession { db in
            let applied = try await self.applied(db)
            try self.refuseIfNewer(applied)
            var progress: [Int: (done: Int, total: Int)] = [:]
            if try await Self.tableExists("kizuna_migration_progress", db) {
                for row in try await db.raw("SELECT version, done, total FROM kizuna_migration_progress").all() {
                    progress[try row.decode(column: "version", as: Int.self)] =
                        (try row.decode(column: "done", as: Int.self), try row.decode(column: "total", as: Int.self))
                }
            }
            return MigrationStatus(
                storeExists: true,
                currentVersion: applied.version,
                latestVersion: self.latestVersion,
                writtenBy: applied.writtenBy,
                pending: self.steps.filter { $0.version > applied.version }.map {
                    .init(version: $0.version, name: $0.name, kind: $0.kind, done: progress[$0.version]?.done, total: progress[$0.version]?.total)
                }
            )
        }
    }

    /// Applies every pending step up to `target` (all when `nil`).
    /// - Parameters:
    ///   - target: The highest version to apply.
    ///   - batchSize: Rows per transaction in data steps.
    ///   - progress: Called after every committed transaction.
    /// - Returns: The status after the run.
    /// - Throws: `store_too_new` before touching a store a newer Kizuna wrote; the step's error otherwise, with every
    ///   committed batch kept.
    @discardableResult
    package func migrate(
        upTo target: Int? = nil,
        batchSize: Int = 1000,
        progress: @escaping @Sendable (MigrationProgress) -> Void = { _ in }
    ) async throws -> MigrationStatus {
        precondition(batchSize > 0, "batch size must be positive")
        try await database.withSession { db in
            try self.refuseIfNewer(try await self.applied(db))
            try await self.locked(db) { db in
                try await db.raw(
                    """
                    CREATE TABLE IF NOT EXISTS kizuna_migrations (
                        version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL, kizuna_version TEXT NOT NULL)
                    """
                ).run()
                try await db.raw(
                    """
                    CREATE TABLE IF NOT EXISTS kizuna_migration_progress (
                        version INTEGER PRIMARY KEY, checkpoint TEXT, done BIGINT NOT NULL, total BIGINT NOT NULL, updated_at BIGINT NOT NULL)
                    """
                ).run()
            }
            let current = try await self.applied(db).version
            let toRun = self.steps.filter { $0.version > current && $0.version <= (target ?? Int.max) }
            for (index, step) in toRun.enumerated() {
                self.logger.info("Applying migration", metadata: ["step": "\(step.version) \(step.name)", "kind": "\(step.kind)"])
                let report = { @Sendable (done: Int, total: Int) in
                    progress(.init(step: "\(step.version) \(step.name)", done: done, total: total, stepIndex: index + 1, stepCount: toRun.count))
                }
                switch step.work {
                case .schema(let apply):
                    try await self.locked(db) { db in
                        guard try await !self.isApplied(step.version, db) else { return }
                        try await apply(db)
                        try await self.record(step, db)
                    }
                    report(1, 1)
                case .batched(let work):
                    try await self.runBatched(step, work, batchSize: batchSize, db: db, report: report)
                }
            }
        }
        return try await status()
    }

    private func runBatched(
        _ step: MigrationStep,
        _ work: BatchedWork,
        batchSize: Int,
        db: any SQLDatabase,
        report: @Sendable (Int, Int) -> Void
    ) async throws {
        // Start: prepare and count once, recording a progress row in the same transaction.
        try await locked(db) { db in
            guard try await !self.isApplied(step.version, db), try await self.checkpoint(step.version, db) == nil else { return }
            try await work.prepare(db)
            let total = try await work.count(db)
            try await db.raw(
                """
                INSERT INTO kizuna_migration_progress (version, checkpoint, done, total, updated_at)
                VALUES (\(bind: step.version), NULL, 0, \(bind: total), \(bind: EpochMillis.now))
                """
            ).run()
        }
        var finished: (done: Int, total: Int)?
        while true {
            let state: (done: Int, total: Int)? = try await locked(db) { db in
                guard try await !self.isApplied(step.version, db), let current = try await self.checkpoint(step.version, db) else { return nil }
                guard let outcome = try await work.batch(db, current.checkpoint, batchSize) else {
                    try await work.finish(db)
                    try await self.record(step, db)
                    try await db.raw("DELETE FROM kizuna_migration_progress WHERE version = \(bind: step.version)").run()
                    finished = (current.done, current.total)
                    return nil
                }
                let done = current.done + outcome.visited
                try await db.raw(
                    """
                    UPDATE kizuna_migration_progress SET checkpoint = \(bind: outcome.checkpoint), done = \(bind: done),
                        updated_at = \(bind: EpochMillis.now) WHERE version = \(bind: step.version)
                    """
                ).run()
                return (done, max(current.total, done))
            }
            guard let state else { break }
            report(state.done, state.total)
        }
        if let finished { report(finished.done, finished.done) }
    }

    // MARK: Bookkeeping

    private struct Applied {
        var version: Int
        var writtenBy: String?
    }

    private func applied(_ db: any SQLDatabase) async throws -> Applied {
        guard try await Self.tableExists("kizuna_migrations", db) else { return Applied(version: 0) }
        let row = try await db.raw("SELECT version, kizuna_version FROM kizuna_migrations ORDER BY version DESC LIMIT 1").first()
        return Applied(
            version: try row?.decode(column: "version", as: Int.self) ?? 0,
            writtenBy: try row?.decode(column: "kizuna_version", as: String.self)
        )
    }

    private func refuseIfNewer(_ applied: Applied) throws {
        guard applied.version > latestVersion else { return }
        throw KizunaError(
            .storeTooNew,
            "The store at \(database.location) has schema version \(applied.version), written by Kizuna \(applied.writtenBy ?? "(unknown)"); "
                + "this Kizuna \(KizunaVersion.current) knows schema versions up to \(latestVersion). It was left untouched: "
                + "run Kizuna \(applied.writtenBy ?? "of that version") or newer."
        )
    }

    private func isApplied(_ version: Int, _ db: any SQLDatabase) async throws -> Bool {
        try await db.raw("SELECT 1 AS one FROM kizuna_migrations WHERE version = \(bind: version)").first() != nil
    }

    private func checkpoint(_ version: Int, _ db: any SQLDatabase) async throws -> (checkpoint: String?, done: Int, total: Int)? {
        guard let row = try await db.raw("SELECT checkpoint, done, total FROM kizuna_migration_progress WHERE version = \(bind: version)").first()
        else { return nil }
        return (
            try row.decodeNil(column: "checkpoint") ? nil : try row.decode(column: "checkpoint", as: String.self),
            try row.decode(column: "done", as: Int.self),
            try row.decode(column: "total", as: Int.self)
        )
    }

    private func record(_ step: MigrationStep, _ db: any SQLDatabase) async throws {
        try await db.raw(
            """
            INSERT INTO kizuna_migrations (version, name, applied_at, kizuna_version)
            VALUES (\(bind: step.version), \(bind: step.name), \(bind: EpochMillis.now), \(bind: KizunaVersion.current))
            """
        ).run()
    }

    /// A transaction that, on PostgreSQL, first takes the migration advisory lock so instances take turns.
    private func locked<R>(_ db: any SQLDatabase, _ body: (any SQLDatabase) async throws -> R) async throws -> R {
        try await database.serializingWrites {
            try await db.inTransaction(immediate: true) { db in
                if db.dialect.name == "postgresql" {
                    try await AdvisoryLock.migration.hold(on: db)
                }
                return try await body(db)
            }
        }
    }

    static func tableExists(_ name: String, _ db: any SQLDatabase) async throws -> Bool {
        if db.dialect.name == "sqlite" {
            return try await db.raw("SELECT 1 AS one FROM sqlite_master WHERE type = 'table' AND name = \(bind: name)").first() != nil
        }
        return try await db.raw(
            "SELECT 1 AS one FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = \(bind: name)"
        ).first() != nil
    }
}
