import SQLKit

extension CoreMigrations {
    /// 9: push credentials and push jobs.
    ///
    /// `push_credentials`: one APNs signing key per app — its key id, team id and topic in the clear, the `.p8` key
    /// itself sealed (AES-GCM under the server's secret key, bound to the app id; never in the clear in the store), and
    /// the SHA-256 of its public key, by which an operator can tell which key is set without seeing it.
    ///
    /// `push_provider_tokens`: the provider token (JWT) in use for each signing key, sealed like the key, so that every
    /// instance sends the same one and APNs sees one token update per renewal, not one per instance.
    ///
    /// `push_jobs`: a notification to send, its target and message as JSON, when (`send_at`; for a send at the same
    /// local time everywhere, `local_time` holds the wall-clock time and `send_at` the earliest moment it is reached
    /// anywhere), and its state. `push_deliveries`: one row per device a job reaches, written when the job is
    /// expanded, each with its own due time, state, attempts, reason and lease: an instance that dies mid-send leaves
    /// leases that run out, and another instance (or the same one restarted) sends what was not answered.
    static let pushJobs = MigrationStep(
        version: 9, name: "push-credentials-jobs",
        work: .schema { db in
            try await db.raw(
                """
                CREATE TABLE push_credentials (
                    app_id TEXT PRIMARY KEY REFERENCES apps (id) ON DELETE CASCADE,
                    key_id TEXT NOT NULL,
                    team_id TEXT NOT NULL,
                    topic TEXT NOT NULL,
                    environment TEXT CHECK (environment IN ('sandbox', 'production')),
                    sealed_key TEXT NOT NULL,
                    key_fingerprint TEXT NOT NULL,
                    updated_at BIGINT NOT NULL)
                """
            ).run()
            try await db.raw(
                """
                CREATE TABLE push_provider_tokens (
                    key_fingerprint TEXT PRIMARY KEY,
                    sealed_token TEXT NOT NULL,
                    issued_at BIGINT NOT NULL)
                """
            ).run()
            try await db.raw(
                """
                CREATE TABLE push_jobs (
                    id TEXT PRIMARY KEY,
                    app_id TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                    target TEXT NOT NULL,
                    message TEXT NOT NULL,
                    send_at BIGINT NOT NULL,
                    local_time TEXT,
                    fallback_time_zone TEXT,
                    state TEXT NOT NULL CHECK (state IN ('scheduled', 'sending', 'done', 'cancelled')),
                    lease_until BIGINT,
                    created_at BIGINT NOT NULL,
                    expanded_at BIGINT,
                    finished_at BIGINT)
                """
            ).run()
            try await db.raw("CREATE INDEX push_jobs_due ON push_jobs (state, send_at)").run()
            try await db.raw("CREATE INDEX push_jobs_app ON push_jobs (app_id, created_at)").run()
            try await db.raw(
                """
                CREATE TABLE push_deliveries (
                    job_id TEXT NOT NULL REFERENCES push_jobs (id) ON DELETE CASCADE,
                    install_id TEXT NOT NULL,
                    app_id TEXT NOT NULL,
                    token TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    locale TEXT,
                    due_at BIGINT NOT NULL,
                    state TEXT NOT NULL CHECK (state IN ('pending', 'sent', 'failed', 'skipped')),
                    reason TEXT,
                    attempts INTEGER NOT NULL,
                    lease_until BIGINT,
                    apns_id TEXT,
                    updated_at BIGINT NOT NULL,
                    PRIMARY KEY (job_id, install_id))
                """
            ).run()
            try await db.raw("CREATE INDEX push_deliveries_due ON push_deliveries (state, due_at)").run()
        }
    )
}
