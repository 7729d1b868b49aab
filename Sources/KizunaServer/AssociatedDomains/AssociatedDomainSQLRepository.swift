import Foundation
import KizunaCore
import SQLKit

/// ``AssociatedDomainRepository`` over SQLite or PostgreSQL: the `associated_domain_settings` table, with the apps
/// registry read through ``AppSQLRepository`` on the same transaction.
struct AssociatedDomainSQLRepository: AssociatedDomainRepository {
    let database: KizunaDatabase
    /// Called after a change commits (the change feed's poke).
    var didCommit: @Sendable () -> Void = {}

    func settings(app: String) async throws -> AssociatedDomainSettings? {
        let row = try await database.select().column("body").from("associated_domain_settings").where("app_id", .equal, SQLBind(app)).first()
        guard let body = try row?.decode(column: "body", as: String.self) else { return nil }
        return try JSONDecoder().decode(AssociatedDomainSettings.self, from: Data(body.utf8))
    }

    func allSettings() async throws -> [String: AssociatedDomainSettings] {
        try await Self.allSettings(database)
    }

    func put(app: String, _ settings: AssociatedDomainSettings, checking check: @escaping AssociatedDomainCheck) async throws {
        let body = String(decoding: try JSONEncoder().encode(settings), as: UTF8.self)
        try await database.transaction { db in
            let inputs = try await lockedInputs(db)
            try check(inputs)
            let now = EpochMillis.now
            try await db.delete(from: "associated_domain_settings").where("app_id", .equal, SQLBind(app)).run()
            try await db.insert(into: "associated_domain_settings").columns("app_id", "body", "updated_at")
                .values(SQLBind(app), SQLBind(body), SQLBind(now)).run()
            // Every instance rebuilds its served file (see ``AssociationFile``).
            try await ChangeLog.append(kind: AssociationFile.settingsChangeKind, entityId: app, version: now, on: db)
        }
        didCommit()
    }

    /// Runs `check` on the file's inputs as `db`, an app change's transaction, sees them, after taking the file's
    /// lock: the apps registry calls it on every change (see ``AppSQLRepository/checkChange``), since any Apple app
    /// changes the file. Throwing refuses the app change.
    func checkAppChange(on db: any SQLDatabase, _ check: (AssociatedDomainInputs) throws -> Void) async throws {
        let inputs = try await lockedInputs(db)
        try check(inputs)
    }

    /// The file's inputs read inside the transaction `db`, after the file's lock.
    private func lockedInputs(_ db: any SQLDatabase) async throws -> AssociatedDomainInputs {
        // Two changes checked at once on PostgreSQL would each see only their own part of the file: take turns, so
        // the second reads the first's committed change (SQLite's writers already take turns).
        if database.engine == .postgres { try await AdvisoryLock.associationFile.hold(on: db) }
        let apps = try await AppSQLRepository.list(on: db)
        return AssociatedDomainInputs(apps: apps, settings: try await Self.allSettings(db))
    }

    private static func allSettings(_ db: any SQLDatabase) async throws -> [String: AssociatedDomainSettings] {
        var settings: [String: AssociatedDomainSettings] = [:]
        for row in try await db.select().columns("app_id", "body").from("associated_domain_settings").all() {
            settings[try row.decode(column: "app_id", as: String.self)] = try JSONDecoder().decode(
                AssociatedDomainSettings.self, from: Data(try row.decode(column: "body", as: String.self).utf8))
        }
        return settings
    }
}
