import SQLKit

extension CoreMigrations {
    /// 5: every refresh token a session has exchanged, so any of them presented again ends the session (not only
    /// the one just before), the sealed answer of the last exchange, so a lost answer can be fetched again, and the
    /// device tokens of the devices an account signed in on.
    ///
    /// `refresh_grace` holds the new pair encrypted under a key derived from the token that was exchanged for it:
    /// only someone holding that token can open it, and it is replaced at the next exchange.
    static let refreshFamilies = MigrationStep(
        version: 5, name: "refresh-token-families-trusted-devices",
        work: .schema { db in
            try await db.raw(
                """
                CREATE TABLE retired_refresh_tokens (
                    refresh_hash TEXT PRIMARY KEY,
                    session_id TEXT NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
                    retired_at BIGINT NOT NULL)
                """
            ).run()
            try await db.raw("CREATE INDEX retired_refresh_tokens_session ON retired_refresh_tokens (session_id)").run()
            // Devices (app installs, browsers) that signed in successfully, by the hash of the token they were given
            // (OWASP's device cookies): their sign-ins are not locked by their address or by guesses from elsewhere.
            try await db.raw(
                """
                CREATE TABLE trusted_devices (
                    token_hash TEXT PRIMARY KEY,
                    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                    created_at BIGINT NOT NULL)
                """
            ).run()
            try await db.raw("CREATE INDEX trusted_devices_user ON trusted_devices (user_id)").run()
            try await db.raw("ALTER TABLE sessions ADD COLUMN rotated_at BIGINT").run()
            try await db.raw("ALTER TABLE sessions ADD COLUMN refresh_grace TEXT").run()
        })
}
