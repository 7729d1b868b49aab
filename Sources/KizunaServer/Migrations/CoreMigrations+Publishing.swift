import SQLKit

extension CoreMigrations {
    /// 3: the `changes` log realtime reads, and published documents (config templates and gate policies) with
    /// their history.
    static let publishing = MigrationStep(
        version: 3, name: "changes-and-published-documents",
        work: .schema { db in
            let key = db.dialect.name == "postgresql" ? "BIGSERIAL PRIMARY KEY" : "INTEGER PRIMARY KEY AUTOINCREMENT"
            try await db.raw(
                """
                CREATE TABLE changes (
                    seq \(unsafeRaw: key),
                    kind TEXT NOT NULL,
                    entity_id TEXT NOT NULL,
                    owner TEXT,
                    version BIGINT NOT NULL,
                    payload TEXT,
                    created_at BIGINT NOT NULL)
                """
            ).run()
            try await db.raw("CREATE INDEX changes_entity_seq ON changes (entity_id, seq)").run()
            try await db.raw(
                """
                CREATE TABLE published_documents (
                    app_id TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                    kind TEXT NOT NULL,
                    version BIGINT NOT NULL,
                    body TEXT NOT NULL,
                    author TEXT NOT NULL,
                    message TEXT,
                    rollback_of BIGINT,
                    created_at BIGINT NOT NULL,
                    PRIMARY KEY (app_id, kind, version))
                """
            ).run()
        })
}
