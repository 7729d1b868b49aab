import KizunaCore
import SQLKit

/// ``AppRepository`` over SQLite or PostgreSQL.
package struct AppSQLRepository: AppRepository {
    let database: KizunaDatabase
    /// Told after a change commits, so this process's change feed reads it at once.
    let didCommit: @Sendable () -> Void
    /// Run inside every change's transaction, after the change: throwing refuses the change. The server checks that
    /// apple-app-site-association, which every Apple app with a team id appears in, still fits Apple's limit.
    let checkChange: @Sendable (any SQLDatabase) async throws -> Void
    /// Removes what other capabilities store for an app outside tables that cascade (the data API's model tables),
    /// in the deleting transaction.
    let willDelete: @Sendable (String, any SQLDatabase) async throws -> Void
    private static let columns = ["id", "name", "platform", "bundle_id", "team_id", "store_url", "created_at", "updated_at"]

    /// Creates the repository over a store.
    package init(database: KizunaDatabase) {
        self.init(database: database, didCommit: {})
    }

    init(
        database: KizunaDatabase, didCommit: @escaping @Sendable () -> Void,
        checkChange: @escaping @Sendable (any SQLDatabase) async throws -> Void = { _ in },
        willDelete: @escaping @Sendable (String, any SQLDatabase) async throws -> Void = { _, _ in }
    ) {
        self.database = database
        self.didCommit = didCommit
        self.checkChange = checkChange
        self.willDelete = willDelete
    }

    package func create(_ app: NewApp) async throws -> AppRecord {
        try AppValidation.validate(app)
        let now = EpochMillis.now
        let checkChange = checkChange
        try await database.transaction { db in
            if try await Self.find(id: app.id, db) != nil {
                throw KizunaError(.conflict, "An app with id '\(app.id)' already exists.", field: "id")
            }
            try await Self.checkBundleFree(app, db)
            try await db.insert(into: "apps")
                .columns(Self.columns + ["bundle_key"])
                .values(
                    SQLBind(app.id), SQLBind(app.name), SQLBind(app.platform.rawValue), SQLBind(app.bundleId), SQLBind(app.teamId),
                    SQLBind(app.storeURL), SQLBind(now), SQLBind(now), SQLBind(app.bundleId.lowercased())
                )
                .run()
            try await checkChange(db)
            // Every instance rebuilds what lists the apps (the apple-app-site-association file). Appended after the
            // check: the file's lock is always taken before the change log's, so two writers cannot deadlock.
            try await ChangeLog.append(kind: "app", entityId: app.id, version: now, on: db)
        }
        didCommit()
        return AppRecord(app, createdAt: now, updatedAt: now)
    }

    package func list() async throws -> [AppRecord] {
        try await Self.list(on: database)
    }

    /// Every app, ordered by id, as the transaction `db` sees it: for checks that run inside another change's
    /// transaction (apple-app-site-association spans every Apple app), where a read through the pool would miss
    /// the change.
    static func list(on db: any SQLDatabase) async throws -> [AppRecord] {
        try await db.select().columns(columns).from("apps").orderBy("id").all().map(Self.record)
    }

    package func find(id: String) async throws -> AppRecord? {
        try await Self.find(id: id, database)
    }

    package func update(id: String, applying patch: AppPatch) async throws -> AppRecord {
        let checkChange = checkChange
        let updated = try await database.transaction { db in
            // FOR UPDATE: on PostgreSQL a concurrent patch waits here instead of merging into the same old row.
            guard let existing = try await Self.find(id: id, db, forUpdate: true) else { throw KizunaError.noSuchApp(id) }
            let app = NewApp(existing).applying(patch)
            try AppValidation.validate(app)
            try await Self.checkBundleFree(app, db)
            let now = EpochMillis.now
            try await db.update("apps")
                .set("name", to: SQLBind(app.name)).set("platform", to: SQLBind(app.platform.rawValue))
                .set("bundle_id", to: SQLBind(app.bundleId)).set("bundle_key", to: SQLBind(app.bundleId.lowercased()))
                .set("team_id", to: SQLBind(app.teamId)).set("store_url", to: SQLBind(app.storeURL))
                .set("updated_at", to: SQLBind(now))
                .where("id", .equal, SQLBind(app.id))
                .run()
            try await checkChange(db)
            // Caches of the app (the device endpoints' store URL, say) drop it on this change.
            try await ChangeLog.append(kind: "app", entityId: app.id, version: now, on: db)
            return AppRecord(app, createdAt: EpochMillis.from(existing.createdAt), updatedAt: now)
        }
        didCommit()
        return updated
    }

    package func delete(id: String) async throws {
        let (checkChange, willDelete) = (checkChange, willDelete)
        try await database.transaction { db in
            guard try await Self.find(id: id, db) != nil else { throw KizunaError.noSuchApp(id) }
            try await willDelete(id, db)
            try await db.delete(from: "apps").where("id", .equal, SQLBind(id)).run()
            try await checkChange(db)
            try await ChangeLog.append(kind: "app", entityId: id, version: 0, on: db)
        }
        didCommit()
    }

    private static func find(id: String, _ db: any SQLDatabase, forUpdate: Bool = false) async throws -> AppRecord? {
        let query = db.select().columns(columns).from("apps").where("id", .equal, SQLBind(id))
        if forUpdate { query.for(.update) }  // SQLite's dialect leaves it out: its writers are already serialized
        return try await query.first().map(record)
    }

    private static func checkBundleFree(_ app: NewApp, _ db: any SQLDatabase) async throws {
        let taken = try await db.select().column("id").from("apps")
            .where("platform", .equal, SQLBind(app.platform.rawValue))
            .where("bundle_key", .equal, SQLBind(app.bundleId.lowercased()))
            .where("id", .notEqual, SQLBind(app.id))
            .first()
        if let taken {
            let owner = try taken.decode(column: "id", as: String.self)
            throw KizunaError(
                .conflict,
                "The bundle id '\(app.bundleId)' is already registered for \(app.platform.rawValue) by app '\(owner)' (bundle ids ignore case).",
                field: "bundleId"
            )
        }
    }

    private static func record(_ row: any SQLRow) throws -> AppRecord {
        AppRecord(
            id: try row.decode(column: "id", as: String.self),
            name: try row.decode(column: "name", as: String.self),
            platform: try row.decode(column: "platform", as: Platform.self),
            bundleId: try row.decode(column: "bundle_id", as: String.self),
            teamId: try row.decode(column: "team_id", as: String?.self),
            storeURL: try row.decode(column: "store_url", as: String?.self),
            createdAt: EpochMillis.date(try row.decode(column: "created_at", as: Int64.self)),
            updatedAt: EpochMillis.date(try row.decode(column: "updated_at", as: Int64.self))
        )
    }
}

extension AppRecord {
    init(_ app: NewApp, createdAt: Int64, updatedAt: Int64) {
        self.init(
            id: app.id,
            name: app.name,
            platform: app.platform,
            bundleId: app.bundleId,
            teamId: app.teamId,
            storeURL: app.storeURL,
            createdAt: EpochMillis.date(createdAt),
            updatedAt: EpochMillis.date(updatedAt)
        )
    }
}
