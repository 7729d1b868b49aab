import SQLKit

extension CoreMigrations {
    /// 12: the admin console's browser sessions.
    ///
    /// `console_sessions`: one per sign-in to `/console` with an admin token. The browser holds `kzc_<id>_<secret>` in
    /// an HttpOnly cookie; only the secret's SHA-256 is stored. `token_id` is the admin token it was opened with:
    /// revoking or deleting that token ends the session. A session ends at `expires_at` (its absolute lifetime) or when
    /// unused since `last_seen_at` for longer than the idle limit, whichever comes first.
    static let consoleSessions = MigrationStep(
        version: 12, name: "console sessions",
        work: .schema { db in
            try await db.raw(
                """
                CREATE TABLE console_sessions (
                    id TEXT PRIMARY KEY,
                    secret_hash TEXT NOT NULL,
                    token_id TEXT NOT NULL REFERENCES admin_tokens (id) ON DELETE CASCADE,
                    created_at BIGINT NOT NULL,
                    last_seen_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL)
                """
            ).run()
            try await db.raw("CREATE INDEX console_sessions_expires ON console_sessions (expires_at)").run()
        })
}
