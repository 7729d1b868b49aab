import Foundation
import KizunaCore
import SQLKit

/// The push registry over SQLite or PostgreSQL (`push_devices`, migration 8).
struct PushDeviceRepository: Sendable {
    let database: KizunaDatabase

    /// Registers (or registers again) an install's token, as `userId` when a session came with it. A token another
    /// install of the app held moves here (the latest registration wins); a retired token is revived.
    func register(app: String, _ registration: PushRegistration, token: APNsDeviceToken, userId: String?) async throws -> PushDevice {
        let device = PushDevice(registration, token: token.hex, userId: userId, registeredAt: EpochMillis.now)
        let attributes = try device.attributes.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
        try await database.transaction { db in
            try await db.raw(
                """
                DELETE FROM push_devices WHERE app_id = \(bind: app) AND token = \(bind: device.token) \
                AND install_id <> \(bind: device.installId)
                """
            ).run()
            try await db.raw(
                """
                INSERT INTO push_devices (app_id, install_id, token, environment, app_version, build_number, platform, os_version, locale,
                    country, attributes, time_zone, user_id, registered_at, retired_at)
                VALUES (\(bind: app), \(bind: device.installId), \(bind: device.token), \(bind: device.environment.rawValue), \
                \(bind: device.appVersion), \(bind: device.buildNumber), \(bind: device.platform?.rawValue), \(bind: device.osVersion), \
                \(bind: device.locale), \(bind: device.country), \(bind: attributes), \(bind: device.timeZone), \(bind: device.userId), \
                \(bind: device.registeredAt), NULL)
                ON CONFLICT (app_id, install_id) DO UPDATE SET token = excluded.token, environment = excluded.environment,
                    app_version = excluded.app_version, build_number = excluded.build_number, platform = excluded.platform,
                    os_version = excluded.os_version, locale = excluded.locale, country = excluded.country, attributes = excluded.attributes,
                    time_zone = excluded.time_zone, user_id = excluded.user_id, registered_at = excluded.registered_at, retired_at = NULL
                """
            ).run()
        }
        return device
    }

    /// Removes an install from the registry.
    /// - Returns: Whether it was there.
    func unregister(app: String, installId: String) async throws -> Bool {
        // One statement, but a write: through a transaction, where this process's SQLite writers take turns.
        try await database.transaction { db in
            try await !db.raw(
                "DELETE FROM push_devices WHERE app_id = \(bind: app) AND install_id = \(bind: installId) RETURNING install_id"
            ).all().isEmpty
        }
    }

    /// The install's registration, if any.
    func device(app: String, installId: String) async throws -> PushDevice? {
        try await database.raw(
            "SELECT \(Self.columns) FROM push_devices WHERE app_id = \(bind: app) AND install_id = \(bind: installId)"
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

    /// The registry's columns a ``PushDevice`` is read from.
    static let columns: SQLQueryString = """
        install_id, token, environment, app_version, build_number, platform, os_version, locale, country, attributes, time_zone, user_id, \
        registered_at, retired_at
        """

    static func device(_ row: any SQLRow) throws -> PushDevice {
        let environment = try row.decode(column: "environment", as: String.self)
        let attributes = try row.decode(column: "attributes", as: String?.self).flatMap {
            try? JSONDecoder().decode([String: AttributeValue].self, from: Data($0.utf8))
        }
        let registration = PushRegistration(
            installId: try row.decode(column: "install_id", as: String.self), token: "",
            environment: APNsEnvironment(rawValue: environment) ?? .production, appVersion: try row.decode(column: "app_version", as: String?.self),
            buildNumber: try row.decode(column: "build_number", as: String?.self),
            platform: try row.decode(column: "platform", as: String?.self).flatMap(Platform.init(rawValue:)),
            osVersion: try row.decode(column: "os_version", as: String?.self), locale: try row.decode(column: "locale", as: String?.self),
            country: try row.decode(column: "country", as: String?.self), attributes: attributes,
            timeZone: try row.decode(column: "time_zone", as: String?.self))
        return PushDevice(
            registration, token: try row.decode(column: "token", as: String.self), userId: try row.decode(column: "user_id", as: String?.self),
            registeredAt: try row.decode(column: "registered_at", as: Int64.self), retiredAt: try row.decode(column: "retired_at", as: Int64?.self))
    }
}

extension PushDeviceRepository {
    /// A page of `app`'s registry in install id order, after `after`.
    func list(app: String, after: String?, limit: Int) async throws -> PushDeviceList {
        let devices = try await database.raw(
            """
            SELECT \(Self.columns) FROM push_devices WHERE app_id = \(bind: app) AND install_id > \(bind: after ?? "")
            ORDER BY install_id LIMIT \(unsafeRaw: String(limit + 1))
            """
        ).all().map(Self.device)
        return PushDeviceList(devices: Array(devices.prefix(limit)), next: devices.count > limit ? devices[limit - 1].installId : nil)
    }
}
