import Foundation
import HTTPTypes
import Hummingbird
import KizunaCore
import Logging
import SQLKit
import Synchronization

/// Each app's associated-domain settings, and the apple-app-site-association file generated from them and the
/// apps registry.
struct AssociatedDomainStore: Sendable {
    let database: KizunaDatabase

    /// An app's settings; the defaults (shares web credentials, opens no links) when none were stored.
    func settings(app: String, _ db: (any SQLDatabase)? = nil) async throws -> AssociatedDomainSettings {
        let row = try await (db ?? database).select().column("body").from("associated_domain_settings").where("app_id", .equal, SQLBind(app)).first()
        guard let body = try row?.decode(column: "body", as: String.self) else { return AssociatedDomainSettings() }
        return try JSONDecoder().decode(AssociatedDomainSettings.self, from: Data(body.utf8))
    }

    /// The file for every Apple app with a team id, in app-id order (the order its rules are tried in), or for one.
    func file(
        onlyApp: String? = nil, _ db: (any SQLDatabase)? = nil, replacing: (app: String, settings: AssociatedDomainSettings)? = nil
    ) async throws
        -> (AppSiteAssociation, [AppSiteAssociation.Entry])
    {
        let db = db ?? database
        let apps = try await db.select().columns("id", "platform", "bundle_id", "team_id").from("apps").orderBy("id").all()
        let stored = try await db.select().columns("app_id", "body").from("associated_domain_settings").all()
        var settings: [String: AssociatedDomainSettings] = [:]
        for row in stored {
            settings[try row.decode(column: "app_id", as: String.self)] = try JSONDecoder().decode(
                AssociatedDomainSettings.self, from: Data(try row.decode(column: "body", as: String.self).utf8))
        }
        if let replacing { settings[replacing.app] = replacing.settings }
        var entries: [AppSiteAssociation.Entry] = []
        for row in apps {
            let id = try row.decode(column: "id", as: String.self)
            guard onlyApp == nil || onlyApp == id, Platform(rawValue: try row.decode(column: "platform", as: String.self))?.isApple ?? false,
                let team = try row.decode(column: "team_id", as: String?.self)
            else { continue }
            entries.append(
                AppSiteAssociation.Entry(
                    teamId: team, bundleId: try row.decode(column: "bundle_id", as: String.self), settings: settings[id] ?? AssociatedDomainSettings()
                ))
        }
        return (AppSiteAssociation(generating: entries), entries)
    }

    /// Refuses a change, inside its transaction, when the file it leads to would conflict or pass 128 KB (naming its
    /// size): the apps registry calls it on every app change too, since any Apple app changes the file.
    func check(_ db: any SQLDatabase, replacing: (app: String, settings: AssociatedDomainSettings)? = nil) async throws {
        // Two changes checked at once on PostgreSQL would each see only their own part of the file: take turns, so
        // the second reads the first's committed change (SQLite's writers already take turns).
        if database.engine == .postgres { try await db.raw("SELECT pg_advisory_xact_lock(\(literal: Self.fileLock))").run() }
        let (file, entries) = try await file(db, replacing: replacing)
        let problems = AppSiteAssociation.problems(in: entries)
        if !problems.isEmpty {
            throw KizunaError(.validationFailed, "The associated-domain settings conflict with the file.", details: problems)
        }
        _ = try file.encoded()  // refuses a file over 128 KB, naming its size
    }

    /// The advisory-lock key of changes to the file ("kzaasa" in ASCII).
    private static let fileLock = 0x6B_7A61_6173_61

    /// Stores an app's settings after checking that the whole file they lead to is valid and at most 128 KB; a
    /// refused change leaves the previous settings in force.
    func put(app: String, _ settings: AssociatedDomainSettings) async throws {
        let body = String(decoding: try JSONEncoder().encode(settings), as: UTF8.self)
        try await database.transaction { db in
            guard let row = try await db.select().columns("platform", "team_id").from("apps").where("id", .equal, SQLBind(app)).first() else {
                throw KizunaError(.notFound, "There is no app with id '\(app)'.", field: "app")
            }
            let platform = try row.decode(column: "platform", as: String.self)
            guard Platform(rawValue: platform)?.isApple == true, try row.decode(column: "team_id", as: String?.self) != nil else {
                throw KizunaError(
                    .validationFailed, "App '\(app)' is a \(platform) app; only Apple apps with a team id appear in apple-app-site-association.",
                    field: "platform")
            }
            try await check(db, replacing: (app, settings))
            let now = EpochMillis.now
            try await db.delete(from: "associated_domain_settings").where("app_id", .equal, SQLBind(app)).run()
            try await db.insert(into: "associated_domain_settings").columns("app_id", "body", "updated_at")
                .values(SQLBind(app), SQLBind(body), SQLBind(now)).run()
        }
    }
}

/// `/.well-known/apple-app-site-association` and the admin routes for the settings behind it.
struct AssociatedDomainsController {
    let store: AssociatedDomainStore
    /// The last file served, kept for when the file cannot be built: iOS reads a 4xx as "not associated" and would
    /// drop AutoFill and universal links for every app, so a server-side problem must never reach it as one.
    private let lastGood = LastGoodFile()

    private final class LastGoodFile: Sendable {
        let bytes = Mutex<[UInt8]?>(nil)
    }

    init(store: AssociatedDomainStore) {
        self.store = store
    }

    func addPublicRoutes(to root: RouteBuilder) {
        // Served directly with 200 and application/json: Apple treats any redirect as "no association".
        root.get("/.well-known/apple-app-site-association") { _, context in
            let bytes: [UInt8]
            do {
                bytes = Array(try await store.file().0.encoded())
                lastGood.bytes.withLock { $0 = bytes }
            } catch {
                // Too large, or the store out of reach: the last good file is still the right answer.
                guard let kept = lastGood.bytes.withLock({ $0 }) else {
                    context.logger.error("apple-app-site-association cannot be built", metadata: ["error": "\(error)"])
                    throw KizunaError(.unavailable, "The apple-app-site-association file cannot be served right now.", retryAfter: 60)
                }
                context.logger.error("apple-app-site-association cannot be built; serving the last good file", metadata: ["error": "\(error)"])
                bytes = kept
            }
            return .bytes(bytes, contentType: "application/json", headers: [.cacheControl: "public, max-age=3600"])
        }
    }

    func addAdminRoutes(to admin: RouteBuilder) {
        admin.get("/apps/{app}/associated-domains") { _, context in
            let app = try await requireApp(context)
            return try .json(try await store.settings(app: app))
        }
        admin.put("/apps/{app}/associated-domains") { request, context in
            let app = try await requireApp(context)
            let settings = try await request.decode(as: AssociatedDomainSettings.self, context: context)
            try await store.put(app: app, settings)
            context.logger.notice("Associated-domain settings changed", metadata: ["app": "\(app)"])
            return try .json(try await store.settings(app: app))
        }
        admin.get("/apps/{app}/apple-app-site-association") { _, context in
            let app = try await requireApp(context)
            let bytes = try await store.file(onlyApp: app).0.encoded()
            return .bytes(Array(bytes), contentType: "application/json")
        }
    }

    private func requireApp(_ context: KizunaRequestContext) async throws -> String {
        let app = try context.parameters.path("app")
        guard try await store.database.select().column("id").from("apps").where("id", .equal, SQLBind(app)).first() != nil else {
            throw KizunaError(.notFound, "There is no app with id '\(app)'.", field: "app")
        }
        return app
    }
}
