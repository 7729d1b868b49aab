import Foundation
import KizunaCore
import SQLKit

/// ``AccountRepository`` over SQLite or PostgreSQL.
///
/// Every write goes through ``KizunaDatabase/transaction(_:)``, even single statements: on SQLite that queues
/// writers as suspended tasks instead of letting them block the shared thread pool (which also hashes passwords)
/// in SQLite's busy wait.
struct AccountSQLRepository: AccountRepository {
    let database: KizunaDatabase
    /// Called after a transaction that may have ended sessions (``SessionEvents``) commits: the change feed's poke.
    var didCommit: @Sendable () -> Void = {}

    /// Runs `body` in a transaction that may end sessions, then tells the change feed.
    func endingSessions<R: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        let result = try await database.transaction(body)
        didCommit()
        return result
    }

    // MARK: Sign-up and sign-in

    func create(_ account: NewAccount, session: NewSession, trust: SessionSecret) async throws -> AccountCreation {
        let identifier = account.account.identifier  // normalised by the service
        do {
            return try await database.transaction { db -> AccountCreation in
                if try await Self.credentials(normalized: identifier, db) != nil { return .identifierTaken }
                let now = account.createdAt
                try await db.insert(into: "users")
                    .columns("id", "identifier", "password_hash", "created_at", "updated_at", "password_changed_at", "last_sign_in_at")
                    .values(
                        SQLBind(account.account.id), SQLBind(identifier), SQLBind(account.passwordHash), SQLBind(now), SQLBind(now),
                        SQLBind(now), SQLBind(now)
                    )
                    .run()
                try await Self.insert(session, for: account.account.id, db)
                try await Self.trustDevice(trust, of: account.account.id, now: now, db)
                return .created
            }
        } catch let error as KizunaError {
            throw error
        } catch {
            // Two sign-ups racing for one identifier: the unique index stops the second.
            if try await Self.credentials(normalized: identifier, database) != nil { return .identifierTaken }
            throw error
        }
    }

    func credentials(identifier: AccountIdentifier) async throws -> StoredCredentials? {
        try await Self.credentials(normalized: identifier.normalized, database)
    }

    func isTrusted(_ token: SessionSecret, by userId: String) async throws -> Bool {
        try await database.select().column("user_id").from("trusted_devices").where("token_hash", .equal, SQLBind(token.hash))
            .where("user_id", .equal, SQLBind(userId)).first() != nil
    }

    func recordSignIn(userId: String, rehashed: String?, session: NewSession, trust: SessionSecret?) async throws {
        try await database.transaction { db in
            let now = session.createdAt
            let update = db.update("users").set("last_sign_in_at", to: SQLBind(now))
            if let rehashed { update.set("password_hash", to: SQLBind(rehashed)) }
            try await update.where("id", .equal, SQLBind(userId)).run()
            try await Self.insert(session, for: userId, db)
            if let trust { try await Self.trustDevice(trust, of: userId, now: now, db) }
        }
    }

    // MARK: Deletion

    func delete(userId: String) async throws {
        try await endingSessions { db in
            // The foreign keys cascade; the explicit deletes keep this true on a store where they were switched off.
            for table in ["one_time_codes", "sessions", "user_devices", "trusted_devices"] {
                try await db.delete(from: table).where("user_id", .equal, SQLBind(userId)).run()
            }
            try await db.delete(from: "users").where("id", .equal, SQLBind(userId)).run()
            try await SessionEvents.ended(userId: userId, on: db)
        }
    }

    // MARK: Shared by the operations

    /// Stores a session of `userId` and records (or refreshes) the device it signed in from.
    static func insert(_ session: NewSession, for userId: String, _ db: any SQLDatabase) async throws {
        let issued = session.issued
        let device = session.device
        let now = session.createdAt
        try await db.insert(into: "sessions")
            .columns(
                "id", "user_id", "kind", "token_hash", "refresh_hash", "app_id", "install_id", "name", "created_at", "last_used_at", "expires_at",
                "refresh_expires_at"
            )
            .values(
                SQLBind(issued.id), SQLBind(userId), SQLBind(session.kind.rawValue), SQLBind(issued.access.hash), SQLBind(issued.refresh?.hash),
                SQLBind(device?.appId), SQLBind(device?.installId), SQLBind(device?.name), SQLBind(now), SQLBind(now), SQLBind(issued.expiresAt),
                SQLBind(issued.refreshExpiresAt)
            )
            .run()
        if let device {
            let exists = try await db.select().column("user_id").from("user_devices").where("user_id", .equal, SQLBind(userId))
                .where("app_id", .equal, SQLBind(device.appId)).where("install_id", .equal, SQLBind(device.installId)).first()
            if exists == nil {
                try await db.insert(into: "user_devices").columns("user_id", "app_id", "install_id", "name", "created_at", "last_seen_at")
                    .values(SQLBind(userId), SQLBind(device.appId), SQLBind(device.installId), SQLBind(device.name), SQLBind(now), SQLBind(now)).run()
            } else {
                try await db.update("user_devices").set("name", to: SQLBind(device.name)).set("last_seen_at", to: SQLBind(now))
                    .where("user_id", .equal, SQLBind(userId)).where("app_id", .equal, SQLBind(device.appId))
                    .where("install_id", .equal, SQLBind(device.installId)).run()
            }
        }
    }

    /// Stores a device token of `userId`, hashed.
    private static func trustDevice(_ token: SessionSecret, of userId: String, now: Int64, _ db: any SQLDatabase) async throws {
        try await db.insert(into: "trusted_devices").columns("token_hash", "user_id", "created_at")
            .values(SQLBind(token.hash), SQLBind(userId), SQLBind(now)).run()
    }

    private static func credentials(normalized identifier: String, _ db: any SQLDatabase) async throws -> StoredCredentials? {
        try await db.select().columns("id", "identifier", "created_at", "password_hash", "disabled_at").from("users")
            .where("identifier", .equal, SQLBind(identifier)).first()
            .map { row in
                StoredCredentials(
                    account: try info(row), passwordHash: try row.decode(column: "password_hash", as: String.self),
                    disabledAt: try row.decode(column: "disabled_at", as: Int64?.self))
            }
    }

    /// The account in a row with `identifier`, `created_at` and its id in column `id`.
    static func info(_ row: any SQLRow, id: String = "id") throws -> AccountInfo {
        AccountInfo(
            id: try row.decode(column: id, as: String.self), identifier: try row.decode(column: "identifier", as: String.self),
            createdAt: EpochMillis.date(try row.decode(column: "created_at", as: Int64.self)))
    }
}
