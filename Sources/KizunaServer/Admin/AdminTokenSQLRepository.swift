import Foundation
import KizunaCore
import SQLKit

/// ``AdminTokenRepository`` over SQLite or PostgreSQL.
package struct AdminTokenSQLRepository: AdminTokenRepository {
    let database: KizunaDatabase

    /// Creates the repository over a store.
    package init(database: KizunaDatabase) {
        self.database = database
    }

    package func create(name: String) async throws -> (AdminToken, AdminCredential) {
        try await create(name: name, onlyIfFirst: false)!
    }

    package func createFirst(name: String) async throws -> (AdminToken, AdminCredential)? {
        try await create(name: name, onlyIfFirst: true)
    }

    private func create(name: String, onlyIfFirst: Bool) async throws -> (AdminToken, AdminCredential)? {
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        var report = ValidationReport()
        report.check(trimmed, with: FieldValidator(field: "name", rules: [NotEmpty(), Length(1...100)]))
        try report.throwIfFailed("The token name")
        let credential = AdminCredential.generate()
        let now = EpochMillis.now
        let engine = database.engine
        let created: Bool = try await database.transaction { db in
            if onlyIfFirst {
                // Two empty-store instances would both count zero under READ COMMITTED; the advisory lock makes the
                // second wait for the first's commit and then see its token. SQLite's BEGIN IMMEDIATE already
                // serialises writers across processes.
                if engine == .postgres { try await AdvisoryLock.bootstrapToken.hold(on: db) }
                let existing = try await db.select().column(SQLFunction("COUNT", args: SQLLiteral.all), as: "n").from("admin_tokens").first()
                if try existing?.decode(column: "n", as: Int.self) ?? 0 > 0 { return false }
            }
            try await db.insert(into: "admin_tokens")
                .columns("id", "name", "secret_hash", "created_at")
                .values(SQLBind(credential.id), SQLBind(trimmed), SQLBind(credential.secretHash), SQLBind(now))
                .run()
            return true
        }
        guard created else { return nil }
        return (AdminToken(id: credential.id, name: trimmed, createdAt: EpochMillis.date(now)), credential)
    }

    package func list() async throws -> [AdminToken] {
        try await database.select().columns("id", "name", "created_at", "last_used_at", "revoked_at").from("admin_tokens")
            .orderBy("created_at", .descending).orderBy("id")
            .all().map(Self.token)
    }

    package func revoke(id: String) async throws -> AdminToken {
        try await database.transaction { db in
            try await db.update("admin_tokens").set("revoked_at", to: SQLBind(EpochMillis.now))
                .where("id", .equal, SQLBind(id)).where("revoked_at", .is, SQLLiteral.null)
                .run()
            guard
                let row = try await db.select().columns("id", "name", "created_at", "last_used_at", "revoked_at")
                    .from("admin_tokens").where("id", .equal, SQLBind(id)).first()
            else { throw KizunaError(.notFound, "There is no admin token with id '\(id)'.", field: "id") }
            return try Self.token(row)
        }
    }

    package func authenticate(_ credential: AdminCredential) async throws -> AdminToken? {
        guard
            let row = try await database.select().columns("id", "name", "secret_hash", "created_at", "last_used_at", "revoked_at")
                .from("admin_tokens").where("id", .equal, SQLBind(credential.id)).first()
        else {
            // Spend the same hashing work as a known id, so timing does not tell which ids exist.
            _ = credential.matches(storedHash: AdminCredential.hash(""))
            return nil
        }
        let matches = credential.matches(storedHash: try row.decode(column: "secret_hash", as: String.self))
        var token = try Self.token(row)
        guard matches, token.isActive else { return nil }
        // Recording every use would turn each admin read into a write; minute resolution is enough to audit.
        let now = EpochMillis.now
        if token.lastUsedAt.map({ EpochMillis.from($0) < now - 60_000 }) ?? true {
            try await database.transaction { [id = token.id] db in
                try await db.update("admin_tokens").set("last_used_at", to: SQLBind(now)).where("id", .equal, SQLBind(id)).run()
            }
            token.lastUsedAt = EpochMillis.date(now)
        }
        return token
    }

    package func count() async throws -> Int {
        try await database.select().column(SQLFunction("COUNT", args: SQLLiteral.all), as: "n").from("admin_tokens")
            .first()?.decode(column: "n", as: Int.self) ?? 0
    }

    /// The token a row of `admin_tokens` (or a query selecting its columns under their names) holds.
    static func token(_ row: any SQLRow) throws -> AdminToken {
        AdminToken(
            id: try row.decode(column: "id", as: String.self),
            name: try row.decode(column: "name", as: String.self),
            createdAt: EpochMillis.date(try row.decode(column: "created_at", as: Int64.self)),
            lastUsedAt: try row.decode(column: "last_used_at", as: Int64?.self).map(EpochMillis.date),
            revokedAt: try row.decode(column: "revoked_at", as: Int64?.self).map(EpochMillis.date)
        )
    }
}
