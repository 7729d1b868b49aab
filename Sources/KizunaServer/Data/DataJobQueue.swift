import Foundation
import KizunaCore
import SQLKit

/// The `data_jobs` table: recorded and cancelled in a publish's transaction, listed for operators, claimed and
/// advanced by ``DataJobRunner``.
///
/// Every change a runner makes to a job names the lease it holds (`lease_owner`, state `running`) and reports
/// whether it still held it: a job cancelled by a later publish, or taken over after the lease ran out, is left to
/// whoever has it now.
package struct DataJobQueue: Sendable {
    let database: KizunaDatabase

    package init(database: KizunaDatabase) {
        self.database = database
    }

    private static let columns: SQLQueryString = """
        id, app_id, schema_version, kind, model, table_name, payload, state, done, total, checkpoint, attempts, error, created_at, \
        started_at, updated_at, finished_at, run_after
        """

    // MARK: In a publish's transaction

    /// Records `jobs` of the publish of `version`, pending.
    static func record(_ jobs: [DataTables.PlannedJob], app: String, version: Int64, on db: any SQLDatabase) async throws {
        let now = EpochMillis.now
        for job in jobs {
            // An index is one unit of work; a backfill counts the table's rows when it starts.
            let total: Int64 = if case .index = job.work { 1 } else { 0 }
            try await db.raw(
                """
                INSERT INTO data_jobs (app_id, schema_version, kind, model, table_name, target, payload, state, done, total, attempts, run_after,
                    created_at, updated_at)
                VALUES (\(bind: app), \(bind: version), \(bind: job.work.kind), \(bind: job.model), \(bind: job.table), \(bind: job.work.target),
                    \(bind: job.work.payload), 'pending', 0, \(bind: total), 0, \(bind: now), \(bind: now), \(bind: now))
                """
            ).run()
        }
    }

    /// Cancels the unfinished jobs `superseded` names, saying which version did it.
    static func cancel(_ superseded: [DataTables.Superseded], app: String, version: Int64, on db: any SQLDatabase) async throws {
        let now = EpochMillis.now
        for entry in superseded {
            let reason = "Schema version \(version) dropped or changed \(entry.target ?? "the model")."
            var query: SQLQueryString = """
                UPDATE data_jobs SET state = 'cancelled', error = \(bind: reason), \
                lease_owner = NULL, lease_expires_at = NULL, finished_at = \(bind: now), updated_at = \(bind: now)
                WHERE app_id = \(bind: app) AND table_name = \(bind: entry.table) AND state IN ('pending', 'running', 'failed')
                """
            if let kind = entry.kind, let target = entry.target { query += " AND kind = \(bind: kind) AND target = \(bind: target)" }
            try await db.raw(query).run()
        }
    }

    // MARK: Operators

    /// The app's jobs, newest first, below `before` when given.
    package func list(app: String, before: Int64?, limit: Int) async throws -> [DataJob] {
        var query: SQLQueryString = "SELECT \(Self.columns) FROM data_jobs WHERE app_id = \(bind: app)"
        if let before { query += " AND id < \(bind: before)" }
        query += " ORDER BY id DESC LIMIT \(bind: limit)"
        return try await database.raw(query).all().compactMap(Self.job)
    }

    /// How many jobs still have work, for the metrics gauge.
    func unfinishedCount() async throws -> Int {
        try await database.raw("SELECT COUNT(*) AS n FROM data_jobs WHERE state IN ('pending', 'running', 'failed')").first()?
            .decode(column: "n", as: Int.self) ?? 0
    }

    // MARK: The runner

    /// Takes the oldest job that may run now: pending, failed and due again, or running under a lease that ran out
    /// (or, with `takeOverAll`, under any lease but `owner`'s: on SQLite only one server runs, so another owner is
    /// a process that died). Two instances never take the same job: PostgreSQL skips rows another claim holds.
    func claim(owner: String, lease: Duration, takeOverAll: Bool) async throws -> DataJob? {
        try await database.transaction { db -> DataJob? in
            let now = EpochMillis.now
            let others: SQLQueryString = takeOverAll ? " OR lease_owner <> \(bind: owner)" : ""
            let locking: SQLQueryString = db.dialect.name == "postgresql" ? " FOR UPDATE SKIP LOCKED" : ""
            while true {
                guard
                    let row = try await db.raw(
                        """
                        SELECT \(Self.columns) FROM data_jobs
                        WHERE (state IN ('pending', 'failed') AND run_after <= \(bind: now))
                            OR (state = 'running' AND (lease_expires_at < \(bind: now)\(others)))
                        ORDER BY id LIMIT 1\(locking)
                        """
                    ).first()
                else { return nil }
                guard var job = try Self.job(row) else {
                    // Written by a newer Kizuna, or damaged: set aside with the reason, so it cannot block the queue.
                    let id = try row.decode(column: "id", as: Int64.self)
                    try await db.raw(
                        """
                        UPDATE data_jobs SET state = 'failed', error = 'This job cannot be read by this version of Kizuna.',
                            run_after = \(bind: now + 86_400_000), updated_at = \(bind: now) WHERE id = \(bind: id)
                        """
                    ).run()
                    continue
                }
                try await db.raw(
                    """
                    UPDATE data_jobs SET state = 'running', lease_owner = \(bind: owner), lease_expires_at = \(bind: now + lease.milliseconds),
                        attempts = attempts + 1, started_at = COALESCE(started_at, \(bind: now)), updated_at = \(bind: now)
                    WHERE id = \(bind: job.id)
                    """
                ).run()
                job.state = .running
                job.attempts += 1
                job.startedAt = job.startedAt ?? now
                return job
            }
        }
    }

    /// The condition every runner write carries: the job is still `owner`'s and running.
    private static func held(_ job: DataJob, by owner: String) -> SQLQueryString {
        "id = \(bind: job.id) AND lease_owner = \(bind: owner) AND state = 'running'"
    }

    /// Runs one write on the job's row, in a transaction (SQLite's writers of this process take turns there);
    /// `false` when it changed nothing, the lease being no longer held.
    private func update(_ statement: SQLQueryString) async throws -> Bool {
        try await database.transaction { db in try await db.raw(statement + " RETURNING id").first() != nil }
    }

    /// Extends the lease; `false` when it is no longer held.
    func renew(_ job: DataJob, owner: String, lease: Duration) async throws -> Bool {
        let now = EpochMillis.now
        return try await update(
            """
            UPDATE data_jobs SET lease_expires_at = \(bind: now + lease.milliseconds), updated_at = \(bind: now)
            WHERE \(Self.held(job, by: owner))
            """
        )
    }

    /// Records a backfill's total; `false` when the lease is no longer held.
    func setTotal(_ total: Int64, of job: DataJob, owner: String) async throws -> Bool {
        try await update("UPDATE data_jobs SET total = \(bind: total), updated_at = \(bind: EpochMillis.now) WHERE \(Self.held(job, by: owner))")
    }

    /// Records a committed batch on `db` (the batch's own transaction) and extends the lease: the rows filled and the
    /// new checkpoint (`nil` to sweep again from the start). Answers the progress, or `nil` when the lease is lost,
    /// and the batch must then roll back.
    static func advance(
        _ job: DataJob, owner: String, lease: Duration, filled: Int, checkpoint: String?, on db: any SQLDatabase
    ) async throws -> (done: Int64, total: Int64)? {
        let now = EpochMillis.now
        guard
            let row = try await db.raw(
                """
                UPDATE data_jobs SET done = done + \(bind: Int64(filled)), checkpoint = \(bind: checkpoint),
                    lease_expires_at = \(bind: now + lease.milliseconds), updated_at = \(bind: now)
                WHERE \(held(job, by: owner)) RETURNING done, total
                """
            ).first()
        else { return nil }
        return (try row.decode(column: "done", as: Int64.self), try row.decode(column: "total", as: Int64.self))
    }

    /// Marks the job done on `db` (in the transaction that did its last work, where there is one); `false` when
    /// the lease is lost, and that work must then roll back.
    static func complete(_ job: DataJob, owner: String, on db: any SQLDatabase) async throws -> Bool {
        let now = EpochMillis.now
        let index = if case .index = job.work { true } else { false }
        // A backfill's total was the rows when it started; done, the rows it filled: at the end, what it filled is all.
        let progress: SQLQueryString = index ? "done = 1, total = 1, " : "total = done, "
        return try await db.raw(
            """
            UPDATE data_jobs SET state = 'done', \(progress)error = NULL, lease_owner = NULL, lease_expires_at = NULL,
                finished_at = \(bind: now), updated_at = \(bind: now)
            WHERE \(held(job, by: owner)) RETURNING id
            """
        ).first() != nil
    }

    /// Records a failed attempt, to be tried again at `retryAt`; `false` when the lease was no longer held (a
    /// publish cancelled the job, and the failure was its doing: a dropped column, say).
    func fail(_ job: DataJob, owner: String, error: String, retryAt: Int64) async throws -> Bool {
        try await update(
            """
            UPDATE data_jobs SET state = 'failed', error = \(bind: error), lease_owner = NULL, lease_expires_at = NULL,
                run_after = \(bind: retryAt), updated_at = \(bind: EpochMillis.now)
            WHERE \(Self.held(job, by: owner))
            """
        )
    }

    /// Hands the job back, pending, for this or another instance to resume (the server is stopping, or the work is
    /// busy elsewhere); from `runAfter` when given.
    func release(_ job: DataJob, owner: String, runAfter: Int64? = nil) async throws {
        let now = EpochMillis.now
        _ = try await update(
            """
            UPDATE data_jobs SET state = 'pending', lease_owner = NULL, lease_expires_at = NULL, run_after = \(bind: runAfter ?? now),
                updated_at = \(bind: now)
            WHERE \(Self.held(job, by: owner))
            """
        )
    }

    /// One job, or `nil`.
    func find(id: Int64) async throws -> DataJob? {
        try await database.raw("SELECT \(Self.columns) FROM data_jobs WHERE id = \(bind: id)").first().flatMap(Self.job)
    }

    /// The job's state now; `nil` when it is gone (its app was deleted).
    func state(of job: DataJob) async throws -> DataJob.State? {
        try await database.raw("SELECT state FROM data_jobs WHERE id = \(bind: job.id)").first()
            .flatMap { DataJob.State(rawValue: try $0.decode(column: "state", as: String.self)) }
    }

    private static func job(_ row: any SQLRow) throws -> DataJob? {
        guard
            let work = DataJob.Work(
                kind: try row.decode(column: "kind", as: String.self), payload: try row.decode(column: "payload", as: String.self)),
            let state = DataJob.State(rawValue: try row.decode(column: "state", as: String.self))
        else { return nil }
        return DataJob(
            id: try row.decode(column: "id", as: Int64.self),
            app: try row.decode(column: "app_id", as: String.self),
            schemaVersion: try row.decode(column: "schema_version", as: Int64.self),
            model: try row.decode(column: "model", as: String.self),
            table: try row.decode(column: "table_name", as: String.self),
            work: work,
            state: state,
            done: try row.decode(column: "done", as: Int64.self),
            total: try row.decode(column: "total", as: Int64.self),
            checkpoint: try row.decode(column: "checkpoint", as: String?.self),
            attempts: try row.decode(column: "attempts", as: Int.self),
            error: try row.decode(column: "error", as: String?.self),
            createdAt: try row.decode(column: "created_at", as: Int64.self),
            startedAt: try row.decode(column: "started_at", as: Int64?.self),
            updatedAt: try row.decode(column: "updated_at", as: Int64.self),
            finishedAt: try row.decode(column: "finished_at", as: Int64?.self),
            runAfter: try row.decode(column: "run_after", as: Int64.self)
        )
    }
}
