import KizunaCore
import Logging
import SQLKit
import ServiceLifecycle

extension DataJobRunner {
    // MARK: Backfill

    /// Fills the NULLs of `field` with `value`, `batchSize` rows per transaction, in id order.
    ///
    /// Each batch updates only rows still NULL (a client may have written the field meanwhile, and that value stays)
    /// and commits with the job's progress and checkpoint, the last id it filled. A kill loses at most the batch in
    /// flight, and the next attempt resumes after the checkpoint. Reaching the end, one more pass from the start
    /// catches rows written below the checkpoint meanwhile by an instance still on the old schema; a pass that finds
    /// none completes the job in its transaction.
    func backfill(_ job: DataJob, field: String, value: StoredValue) async throws {
        var job = job
        let table = job.table
        if job.checkpoint == nil, job.total == 0 {
            let total = try await database.raw("SELECT COUNT(*) AS n FROM \(ident: table)").first()?.decode(column: "n", as: Int64.self) ?? 0
            guard try await queue.setTotal(total, of: job, owner: owner) else { throw Interruption.lost }
            job.total = total
        }
        let assigned = assignment(value)
        var checkpoint = job.checkpoint ?? ""
        while true {
            if Task.isCancelled || Task.isShuttingDownGracefully { throw Interruption.stopping }
            let (from, current, limit) = (checkpoint, job, batchSize)
            let next: String? = try await database.transaction { db -> String? in
                let ids = try await db.raw(
                    """
                    SELECT \(ident: "id") FROM \(ident: table) WHERE \(ident: "id") > \(bind: from) AND \(ident: field) IS NULL
                    ORDER BY \(ident: "id") LIMIT \(bind: limit)
                    """
                ).all().map { try $0.decode(column: "id", as: String.self) }
                if let last = ids.last {
                    try await db.raw(
                        """
                        UPDATE \(ident: table) SET \(ident: field) = \(assigned)
                        WHERE \(ident: "id") > \(bind: from) AND \(ident: "id") <= \(bind: last) AND \(ident: field) IS NULL
                        """
                    ).run()
                    guard
                        try await DataJobQueue.advance(
                            current, owner: self.owner, lease: self.settings.lease, filled: ids.count, checkpoint: last, on: db) != nil
                    else { throw Interruption.lost }  // rolls the batch back
                    return last
                }
                if from.isEmpty {
                    guard try await DataJobQueue.complete(current, owner: self.owner, on: db) else { throw Interruption.lost }
                    return nil
                }
                guard
                    try await DataJobQueue.advance(current, owner: self.owner, lease: self.settings.lease, filled: 0, checkpoint: nil, on: db)
                        != nil
                else { throw Interruption.lost }
                return ""
            }
            guard let next else { return }
            checkpoint = next
            await report(job)
        }
    }

    /// The value a backfill assigns: bound, and cast to JSONB for a JSON column on PostgreSQL.
    private func assignment(_ value: StoredValue) -> SQLQueryString {
        if case .json(let text) = value, database.engine == .postgres { return "CAST(\(bind: text) AS JSONB)" }
        return "\(bind: value.bindable)"
    }

    // MARK: Index

    /// Builds the index `name` on the job's table, or accepts the one already there when it is valid and has the
    /// same columns (an attempt that was killed after building it).
    ///
    /// On SQLite the build runs in one transaction with the job's completion (readers go on under WAL; writers wait
    /// for it). On PostgreSQL it runs `CREATE INDEX CONCURRENTLY` on a pinned session, outside any transaction, so
    /// reads and writes go on; a build killed mid-way leaves an INVALID index under the name, which is dropped
    /// (concurrently) first. A session advisory lock on the name keeps two instances from building it at once.
    func buildIndex(_ job: DataJob, name: String, columns: [String]) async throws {
        switch database.engine {
        case .sqlite:
            try await database.transaction { db -> Void in
                let existing = try await db.raw("SELECT name FROM pragma_index_info(\(bind: name)) ORDER BY seqno").all()
                    .map { try $0.decode(column: "name", as: String.self) }
                if existing != columns {
                    if !existing.isEmpty { try await db.raw("DROP INDEX IF EXISTS \(ident: name)").run() }
                    try await db.raw("CREATE INDEX IF NOT EXISTS \(ident: name) ON \(ident: job.table) (\(idents: columns, joinedBy: ", "))").run()
                }
                guard try await DataJobQueue.complete(job, owner: self.owner, on: db) else { throw Interruption.lost }
            }
        case .postgres:
            try await database.withSession { db -> Void in
                let lock = AdvisoryLock.indexBuild.keys(name)
                let locked = try await db.raw("SELECT pg_try_advisory_lock(\(lock)) AS locked").first()?.decode(column: "locked", as: Bool.self)
                guard locked == true else { throw Interruption.busy }
                do {
                    try await self.buildConcurrently(job, name: name, columns: columns, on: db)
                    try await db.raw("SELECT pg_advisory_unlock(\(lock))").run()
                } catch {
                    try? await db.raw("SELECT pg_advisory_unlock(\(lock))").run()
                    throw error
                }
            }
        }
    }

    private func buildConcurrently(_ job: DataJob, name: String, columns: [String], on db: any SQLDatabase) async throws {
        let existing = try await db.raw(
            """
            SELECT i.indisvalid AS valid, a.attname::text AS name FROM pg_index i
            CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ord)
            JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
            WHERE i.indexrelid = to_regclass(\(bind: DataTables.quoted(name)))
            ORDER BY k.ord
            """
        ).all()
        let valid = try existing.first?.decode(column: "valid", as: Bool.self) ?? false
        let names = try existing.map { try $0.decode(column: "name", as: String.self) }
        if !(valid && names == columns) {
            if !existing.isEmpty {
                logger.info("Dropping an index left invalid or different by an earlier attempt", metadata: ["index": "\(name)", "job": "\(job.id)"])
                try await db.raw("DROP INDEX CONCURRENTLY IF EXISTS \(ident: name)").run()
            }
            try await keepingLease(job) {
                try await db.raw("CREATE INDEX CONCURRENTLY IF NOT EXISTS \(ident: name) ON \(ident: job.table) (\(idents: columns, joinedBy: ", "))")
                    .run()
            }
        }
        if try await DataJobQueue.complete(job, owner: owner, on: db) { return }
        // Cancelled while it built (a publish dropped or changed the index before the build made it), or the app is
        // gone: what was built is not wanted. Taken over instead, it is the new owner's to check.
        let state = try await queue.state(of: job)
        if state == nil || state == .cancelled { try await db.raw("DROP INDEX CONCURRENTLY IF EXISTS \(ident: name)").run() }
        throw Interruption.lost
    }

    /// Runs `body` while renewing the job's lease every third of it, so a long build is not taken for abandoned.
    private func keepingLease(_ job: DataJob, _ body: () async throws -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                while true {
                    try await Task.sleep(for: self.settings.lease / 3)
                    _ = try? await self.queue.renew(job, owner: self.owner, lease: self.settings.lease)
                }
            }
            try await body()
            group.cancelAll()
        }
    }
}
