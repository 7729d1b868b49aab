import SQLKit

extension CoreMigrations {
    /// 8: the push registry — one row per install of an app: its APNs token (lowercase hex, unique in the app, so a
    /// token that moves to another install follows its latest registration), the APNs environment it came from, what
    /// targeting reads (the device context conditions test — app version, build, platform, OS version, locale,
    /// country, attributes as JSON — and the time zone), the signed-in user it was registered as, and when APNs said
    /// the token stopped working (`retired_at`; a later registration revives it).
    static let pushDevices = MigrationStep(
        version: 8, name: "push-devices",
        work: .schema { db in
            try await db.raw(
                """
                CREATE TABLE push_devices (
                    app_id TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                    install_id TEXT NOT NULL,
                    token TEXT NOT NULL,
                    environment TEXT NOT NULL CHECK (environment IN ('sandbox', 'production')),
                    app_version TEXT,
                    build_number TEXT,
                    platform TEXT,
                    os_version TEXT,
                    locale TEXT,
                    country TEXT,
                    attributes TEXT,
                    time_zone TEXT,
                    user_id TEXT REFERENCES users (id) ON DELETE SET NULL,
                    registered_at BIGINT NOT NULL,
                    retired_at BIGINT,
                    PRIMARY KEY (app_id, install_id))
                """
            ).run()
            try await db.raw("CREATE UNIQUE INDEX push_devices_token ON push_devices (app_id, token)").run()
            try await db.raw("CREATE INDEX push_devices_user ON push_devices (app_id, user_id)").run()
        }
    )
}
