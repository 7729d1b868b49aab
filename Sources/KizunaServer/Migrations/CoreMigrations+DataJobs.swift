import SQLKit

extension CoreMigrations {
    /// 7: `data_jobs`, the work a data schema publish leaves for ``DataJobRunner``: index builds on tables that
    /// already hold records, and backfills of a new field's default that has no constant SQL form.
    ///
    /// A job is written in the publish's transaction, so a schema that is live always has its jobs recorded. Its
    /// lease (an owner and an expiry) lets another instance take over a job left `running` by one that died; a
    /// backfill's `checkpoint` is the last id it filled, committed with each batch.
    static let dataJobs = MigrationStep(
        version: 7, name: "data-schema-jobs",
        work: .schema { db in
            let key = db.dialect.name == "postgresql" ? "BIGSERIAL PRIMARY KEY" : "INTEGER PRIMARY KEY AUTOINCREMENT"
            try await db.raw(
                """
                CREATE TABLE data_jobs (
                    id \(unsafeRaw: key),
                    app_id TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                    schema_version BIGINT NOT NULL,
                    kind TEXT NOT NULL,
                    model TEXT NOT NULL,
                    table_name TEXT NOT NULL,
                    target TEXT NOT NULL,
                    payload TEXT NOT NULL,
                    state TEXT NOT NULL,
                    done BIGINT NOT NULL,
                    total BIGINT NOT NULL,
                    checkpoint TEXT,
                    attempts BIGINT NOT NULL,
                    lease_owner TEXT,
                    lease_expires_at BIGINT,
                    run_after BIGINT NOT NULL,
                    error TEXT,
                    created_at BIGINT NOT NULL,
                    started_at BIGINT,
                    updated_at BIGINT NOT NULL,
                    finished_at BIGINT)
                """
            ).run()
            try await db.raw("CREATE INDEX data_jobs_app ON data_jobs (app_id, id)").run()
            try await db.raw("CREATE INDEX data_jobs_state ON data_jobs (state, run_after)").run()
        }
    )
}
