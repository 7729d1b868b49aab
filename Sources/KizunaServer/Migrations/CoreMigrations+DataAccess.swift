import SQLKit

extension CoreMigrations {
    /// 6: what the data API's access rules need besides sessions: each app's API keys (Amplify's `public` callers),
    /// users' groups (`groups` rules), and the server's own secrets (the key that signs page tokens, shared by every
    /// instance of one store).
    ///
    /// API keys are stored as SHA-256 hashes of 256-bit random secrets, like admin tokens: a copy of the store
    /// holds nothing a client could present.
    static let dataAccess = MigrationStep(
        version: 6, name: "api-keys-groups-server-secrets",
        work: .schema { db in
            try await db.raw(
                """
                CREATE TABLE api_keys (
                    id TEXT PRIMARY KEY,
                    app_id TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                    name TEXT NOT NULL,
                    secret_hash TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    revoked_at BIGINT,
                    last_used_at BIGINT)
                """
            ).run()
            try await db.raw("CREATE INDEX api_keys_app ON api_keys (app_id)").run()
            try await db.raw(
                """
                CREATE TABLE user_groups (
                    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                    group_name TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    PRIMARY KEY (user_id, group_name))
                """
            ).run()
            try await db.raw(
                """
                CREATE TABLE server_secrets (
                    name TEXT PRIMARY KEY,
                    secret TEXT NOT NULL,
                    created_at BIGINT NOT NULL)
                """
            ).run()
        }
    )
}
