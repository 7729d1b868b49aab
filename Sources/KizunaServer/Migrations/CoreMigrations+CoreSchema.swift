import SQLKit

extension CoreMigrations {
    /// 1: the apps registry and admin tokens.
    static let coreSchema = MigrationStep(
        version: 1, name: "core-schema",
        work: .schema { db in
            try await db.raw(
                """
                CREATE TABLE apps (
                    id TEXT PRIMARY KEY,
                    name TEXT NOT NULL,
                    platform TEXT NOT NULL,
                    bundle_id TEXT NOT NULL,
                    team_id TEXT,
                    store_url TEXT,
                    created_at BIGINT NOT NULL,
                    updated_at BIGINT NOT NULL)
                """
            ).run()
            try await db.raw(
                """
                CREATE TABLE admin_tokens (
                    id TEXT PRIMARY KEY,
                    name TEXT NOT NULL,
                    secret_hash TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    last_used_at BIGINT,
                    revoked_at BIGINT)
                """
            ).run()
        })
}
