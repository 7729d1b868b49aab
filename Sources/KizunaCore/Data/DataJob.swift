import Foundation

/// Work a data schema publish left to run in the background, as `GET /v1/admin/apps/{app}/schema/jobs` lists it.
///
/// A publish changes the tables in its own transaction when that is instant (a new model's table, a new column, a
/// drop). Building an index on a table that already holds records, or filling a new field's default into every
/// record, takes time on a big table, so the publish records a job instead and the server runs it in short steps
/// while it keeps answering: an index is built without blocking writes (`CREATE INDEX CONCURRENTLY` on PostgreSQL),
/// a backfill fills batches of records, each in its own transaction. A job survives a restart or a killed server
/// and resumes where it stopped; until a backfill is done, reads return the field's default for records it has not
/// reached yet.
public struct DataJobInfo: Sendable, Codable, Hashable {
    /// Increasing per store, so newer jobs have larger ids.
    public var id: Int64
    /// The schema version whose publish recorded the job.
    public var schemaVersion: Int64
    /// `index` (build an index) or `backfill` (fill a field's default into existing records).
    public var kind: String
    /// The model whose table the job works on.
    public var model: String
    /// The index (for `index` jobs) or the field (for `backfill` jobs).
    public var target: String
    /// `pending`, `running`, `done`, `failed` (the last attempt failed; retried at ``nextAttemptAt``) or `cancelled`
    /// (a later publish dropped or changed what the job was for).
    public var state: String
    /// Records filled so far (backfills); 0 or 1 for an index.
    public var done: Int64
    /// Records the job expects to visit: the table's rows when it started (an estimate; rows come and go meanwhile).
    public var total: Int64
    /// Attempts started, counting a takeover after a server stopped mid-way.
    public var attempts: Int
    /// Why the last attempt failed, or why the job was cancelled.
    public var error: String?
    public var createdAt: Date
    public var startedAt: Date?
    public var updatedAt: Date
    public var finishedAt: Date?
    /// When a failed job is tried again.
    public var nextAttemptAt: Date?

    public init(
        id: Int64, schemaVersion: Int64, kind: String, model: String, target: String, state: String, done: Int64, total: Int64,
        attempts: Int, error: String? = nil, createdAt: Date, startedAt: Date? = nil, updatedAt: Date, finishedAt: Date? = nil,
        nextAttemptAt: Date? = nil
    ) {
        self.id = id
        self.schemaVersion = schemaVersion
        self.kind = kind
        self.model = model
        self.target = target
        self.state = state
        self.done = done
        self.total = total
        self.attempts = attempts
        self.error = error
        self.createdAt = createdAt
        self.startedAt = startedAt
        self.updatedAt = updatedAt
        self.finishedAt = finishedAt
        self.nextAttemptAt = nextAttemptAt
    }

    /// Whether the job has nothing left to do: `done` or `cancelled`.
    public var isFinished: Bool { state == "done" || state == "cancelled" }
}

/// The answer of `GET /v1/admin/apps/{app}/schema/jobs`: newest first.
public struct DataJobList: Sendable, Codable, Hashable {
    public var jobs: [DataJobInfo]
    public init(jobs: [DataJobInfo]) { self.jobs = jobs }
}
