import SQLKit

/// Kizuna's own schema history. Append new steps; never edit or renumber an applied one.
package enum CoreMigrations {
    /// Every step, in order.
    package static let all: [MigrationStep] = [coreSchema, appsBundleKey, publishing, accounts, refreshFamilies]

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

    /// 2: `apps.bundle_key`, the case-folded bundle id, unique per platform.
    ///
    /// Apple treats bundle ids case-insensitively, so `com.Example.App` and `com.example.app` must not both register.
    /// Existing rows are filled in batches keyed by id, so a store with many apps migrates without one long lock and
    /// resumes where it stopped.
    static let appsBundleKey = MigrationStep(
        version: 2, name: "apps-bundle-key",
        work: .batched(
            BatchedWork(
                prepare: { db in try await db.raw("ALTER TABLE apps ADD COLUMN bundle_key TEXT").run() },
                count: { db in try await db.raw("SELECT COUNT(*) AS n FROM apps").first()?.decode(column: "n", as: Int.self) ?? 0 },
                batch: { db, checkpoint, limit in
                    let ids = try await db.raw(
                        "SELECT id FROM apps WHERE id > \(bind: checkpoint ?? "") ORDER BY id LIMIT \(bind: limit)"
                    ).all().map { try $0.decode(column: "id", as: String.self) }
                    guard let last = ids.last else { return nil }
                    try await db.raw(
                        "UPDATE apps SET bundle_key = LOWER(bundle_id) WHERE id > \(bind: checkpoint ?? "") AND id <= \(bind: last)"
                    ).run()
                    return BatchOutcome(checkpoint: last, visited: ids.count)
                },
                finish: { db in
                    try await db.raw("CREATE UNIQUE INDEX apps_platform_bundle_key ON apps (platform, bundle_key)").run()
                }
            )))

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
