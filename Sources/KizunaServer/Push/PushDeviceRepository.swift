import KizunaCore
import SQLKit

/// The push registry over SQLite or PostgreSQL (`push_devices`, migration 8).
struct PushDeviceRepository: Sendable {
    let database: KizunaDatabase

    /// Registers (or registers again) an install's token, as `userId` when a session came with it. A token another
    /// install of the app held moves here (the latest registration wins); a retired token is revived.
    func register(app: String, _ registration: PushRegistration, token: APNsDeviceToken, userId: String?) async throws -> PushDevice {
        let device = PushDevice(
            installId: registration.installId, token: token.hex, environment: registration.environment, appVersion: registration.appVersion,
            locale: registration.locale, timeZone: registration.timeZone, userId: userId, registeredAt: EpochMillis.now)
        try await database.transaction { db in
            try await db.raw(
                """
                DELETE FROM push_devices WHERE app_id = \(bind: app) AND token = \(bind: device.token) \
                AND install_id <> \(bind: device.installId)
                """
            ).run()
            try await db.raw(
                """
                INSERT INTO push_devices (app_id, install_id, token, environment, app_version, locale, time_zone, user_id, registered_at, retired_at)
                VALUES (\(bind: app), \(bind: device.installId), \(bind: device.token), \(bind: device.environment.rawValue), \
                \(bind: device.appVersion), \(bind: device.locale), \(bind: device.timeZone), \(bind: device.userId), \(bind: device.registeredAt), NULL)
                ON CONFLICT (app_id, install_id) DO UPDATE SET token = excluded.token, environment = excluded.environment,
                    app_version = excluded.app_version, locale = excluded.locale, time_zone = excluded.time_zone,
                    user_id = excluded.user_id, registered_at = excluded.registered_at, retired_at = NULL
                """
            ).run()
        }
        return device
    }

    /// Removes an install from the registry.
    /// - Returns: Whether it was there.
    func unregister(app: String, installId: String) async throws -> Bool {
        try await !database.raw(
            "DELETE FROM push_devices WHERE app_id = \(bind: app) AND install_id = \(bind: installId) RETURNING install_id"
        ).all().isEmpty
    }

    /// The install's registration, if any.
    func device(app: String, installId: String) async throws -> PushDevice? {
        try await database.raw(
            "SELECT * FROM push_devices WHERE app_id = \(bind: app) AND install_id = \(bind: installId)"
        ).first().map(Self.device)
    }

    /// Which sessions a sign-out ends.
    enum SigningOut: Sendable {
        /// One session.
        case session(String)
        /// Every session of the account but this one (if any).
        case allBut(String?)
    }

    /// Unlinks `userId` from the installs whose sessions are signing out, in the sign-out's transaction (before the
    /// sessions go): a token stays registered, as nobody, until its app registers it as someone again.
    static func unlink(userId: String, signingOut: SigningOut, on db: any SQLDatabase) async throws {
        let sameInstall: SQLQueryString = """
            s.app_id = push_devices.app_id AND s.install_id = push_devices.install_id
            """
        switch signingOut {
        case .session(let id):
            try await db.raw(
                """
                UPDATE push_devices SET user_id = NULL WHERE user_id = \(bind: userId) \
                AND EXISTS (SELECT 1 FROM sessions s WHERE s.id = \(bind: id) AND \(sameInstall))
                """
            ).run()
        case .allBut(let keeping):
            try await db.raw(
                """
                UPDATE push_devices SET user_id = NULL WHERE user_id = \(bind: userId) \
                AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = \(bind: keeping ?? "") AND \(sameInstall))
                """
            ).run()
        }
    }

    private static func device(_ row: any SQLRow) throws -> PushDevice {
        let environment = try row.decode(column: "environment", as: String.self)
        return PushDevice(
            installId: try row.decode(column: "install_id", as: String.self), token: try row.decode(column: "token", as: String.self),
            environment: APNsEnvironment(rawValue: environment) ?? .production, appVersion: try row.decode(column: "app_version", as: String?.self),
            locale: try row.decode(column: "locale", as: String?.self), timeZone: try row.decode(column: "time_zone", as: String?.self),
            userId: try row.decode(column: "user_id", as: String?.self), registeredAt: try row.decode(column: "registered_at", as: Int64.self))
    }
}
