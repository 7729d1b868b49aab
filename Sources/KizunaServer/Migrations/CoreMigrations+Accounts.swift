import SQLKit

extension CoreMigrations {
    /// 4: accounts, their sessions and devices, one-time codes (web-view handoff, password reset), sign-in
    /// throttles, and each app's associated-domain settings.
    ///
    /// Secrets are stored as SHA-256 hashes of 256-bit random values (sessions, codes) or scrypt PHC strings
    /// (passwords); nothing here can be replayed from a copy of the store.
    static let accounts = MigrationStep(
        version: 4, name: "accounts-sessions-associated-domains",
        work: .schema { db in
            try await db.raw(
                """
                CREATE TABLE users (
                    id TEXT PRIMARY KEY,
                    identifier TEXT NOT NULL,
                    password_hash TEXT NOT NULL,
                    disabled_at BIGINT,
                    created_at BIGINT NOT NULL,
                    updated_at BIGINT NOT NULL,
                    password_changed_at BIGINT NOT NULL,
                    last_sign_in_at BIGINT)
                """
            ).run()
            try await db.raw("CREATE UNIQUE INDEX users_identifier ON users (identifier)").run()
            try await db.raw(
                """
                CREATE TABLE sessions (
                    id TEXT PRIMARY KEY,
                    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                    kind TEXT NOT NULL,
                    token_hash TEXT NOT NULL,
                    refresh_hash TEXT,
                    previous_refresh_hash TEXT,
                    app_id TEXT,
                    install_id TEXT,
                    name TEXT,
                    created_at BIGINT NOT NULL,
                    last_used_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL,
                    refresh_expires_at BIGINT)
                """
            ).run()
            try await db.raw("CREATE UNIQUE INDEX sessions_token_hash ON sessions (token_hash)").run()
            try await db.raw("CREATE UNIQUE INDEX sessions_refresh_hash ON sessions (refresh_hash)").run()
            try await db.raw("CREATE INDEX sessions_previous_refresh_hash ON sessions (previous_refresh_hash)").run()
            try await db.raw("CREATE INDEX sessions_user ON sessions (user_id)").run()
            try await db.raw(
                """
                CREATE TABLE user_devices (
                    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                    app_id TEXT NOT NULL,
                    install_id TEXT NOT NULL,
                    name TEXT,
                    created_at BIGINT NOT NULL,
                    last_seen_at BIGINT NOT NULL,
                    PRIMARY KEY (user_id, app_id, install_id))
                """
            ).run()
            try await db.raw(
                """
                CREATE TABLE one_time_codes (
                    code_hash TEXT PRIMARY KEY,
                    purpose TEXT NOT NULL,
                    user_id TEXT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
                    session_id TEXT REFERENCES sessions (id) ON DELETE CASCADE,
                    next_path TEXT,
                    created_at BIGINT NOT NULL,
                    expires_at BIGINT NOT NULL)
                """
            ).run()
            try await db.raw("CREATE INDEX one_time_codes_user ON one_time_codes (user_id)").run()
            try await db.raw(
                """
                CREATE TABLE sign_in_throttles (
                    key TEXT PRIMARY KEY,
                    failures INTEGER NOT NULL,
                    locked_until BIGINT,
                    updated_at BIGINT NOT NULL)
                """
            ).run()
            try await db.raw(
                """
                CREATE TABLE associated_domain_settings (
                    app_id TEXT PRIMARY KEY REFERENCES apps (id) ON DELETE CASCADE,
                    body TEXT NOT NULL,
                    updated_at BIGINT NOT NULL)
                """
            ).run()
        })
}
