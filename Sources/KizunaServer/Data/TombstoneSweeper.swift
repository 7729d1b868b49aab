import KizunaCore
import Logging
import ServiceLifecycle

/// Deletes data tombstones older than the retention, for every app with a data schema, and the `changes` log's rows
/// older than the change retention: once the store is ready, then every `interval`.
///
/// Deleted records stay as tombstones so an offline client's sync learns of the delete; after the retention a sync
/// from before it is refused (`sync_expired`), so the tombstone has done its work. The log's rows go after their own
/// retention (by default the same): every write appends one, and a subscription resuming from further back is told
/// `sync_expired` and resyncs. Any instance may sweep: the deletes are idempotent, and the log is pruned in batches of
/// short transactions that take no lock writers wait for (``ChangeLog/prune(before:batch:on:)``).
struct TombstoneSweeper: Service {
    let apps: any AppRepository
    let schemas: LiveDataSchemas
    let database: KizunaDatabase
    let readiness: Readiness
    /// How long tombstones are kept, in milliseconds.
    let retention: Int64
    /// How long the log keeps a change, in milliseconds.
    let changeRetention: Int64
    let interval: Duration
    let logger: Logger

    func run() async throws {
        await sweepPeriodically(readiness: readiness, every: interval, logger: logger, what: "Sweeping data tombstones") {
            let pruned = try await sweep(now: EpochMillis.now)
            if pruned > 0 { logger.info("Deleted expired data tombstones", metadata: ["count": "\(pruned)"]) }
        }
    }

    /// Deletes every app's tombstones deleted before `now` minus the retention, then the log's changes older than
    /// their retention (always keeping the newest).
    /// - Returns: How many tombstones were deleted.
    func sweep(now: Int64) async throws -> Int {
        var pruned = 0
        for app in try await apps.list() {
            let runtime = try await schemas.runtime(app.id)
            pruned += try await runtime.pruneTombstones(before: now - retention)
        }
        try await ChangeLog.prune(before: now - changeRetention, on: database)
        return pruned
    }
}
