import Foundation
import KizunaCore
import SQLKit

/// What operators read and change through the admin API.
extension AccountSQLRepository {
    func account(id: String) async throws -> AccountInfo? {
        try await database.select().columns("id", "identifier", "created_at").from("users").where("id", .equal, SQLBind(id)).first().map {
            try Self.info($0)
        }
    }

    func user(id: String, now: Int64) async throws -> UserRecord? {
        guard let row = try await database.select().columns(Self.userColumns).from("users").where("id", .equal, SQLBind(id)).first() else {
            return nil
        }
        return try await records([row], now: now).first
    }

    func user(identifier: String, now: Int64) async throws -> UserRecord? {
        let query = database.select().columns(Self.userColumns).from("users").where("identifier", .equal, SQLBind(identifier))
        guard let row = try await query.first() else { return nil }
        return try await records([row], now: now).first
    }

    func users(after: String?, limit: Int, containing search: String?, now: Int64) async throws -> UserList {
        let query = database.select().columns(Self.userColumns).from("users").orderBy("identifier").limit(limit + 1)
        if let after { query.where("identifier", .greaterThan, SQLBind(after)) }
        if let search, !search.isEmpty {
            let escaped = search.replacingOccurrences(of: "\\", with: "\\\\")
                .replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_")
            query.where(SQLQueryString("identifier LIKE \(bind: "%\(escaped)%") ESCAPE '\\'"))
        }
        let rows = try await query.all()
        let users = try await records(Array(rows.prefix(limit)), now: now)
        return UserList(users: users, next: rows.count > limit ? users.last?.identifier : nil)
    }

    func setDisabled(_ disabled: Bool, userId: String, at now: Int64) async throws {
        try await endingSessions { db in
            try await db.update("users").set("disabled_at", to: SQLBind(disabled ? now : nil)).set("updated_at", to: SQLBind(now))
                .where("id", .equal, SQLBind(userId)).run()
            if disabled {
                try await db.delete(from: "sessions").where("user_id", .equal, SQLBind(userId)).run()
                try await SessionEvents.ended(userId: userId, on: db)
            }
        }
    }

    private static let userColumns = [
        "id", "identifier", "disabled_at", "created_at", "updated_at", "password_changed_at", "last_sign_in_at",
    ]

    /// The records of a page of `users` rows: two queries for the whole page (session counts, devices), not two per
    /// account.
    private func records(_ rows: [any SQLRow], now: Int64) async throws -> [UserRecord] {
        let ids = try rows.map { try $0.decode(column: "id", as: String.self) }
        guard !ids.isEmpty else { return [] }
        var active: [String: Int] = [:]
        let counts = try await database.select().column("user_id").column(SQLAlias(SQLFunction("COUNT", args: SQLLiteral.all), as: "n"))
            .from("sessions").where("user_id", .in, ids)
            .where(group: { $0.where("expires_at", .greaterThan, SQLBind(now)).orWhere("refresh_expires_at", .greaterThan, SQLBind(now)) })
            .groupBy("user_id").all()
        for row in counts {
            active[try row.decode(column: "user_id", as: String.self)] = try row.decode(column: "n", as: Int.self)
        }
        var devices: [String: [AccountDevice]] = [:]
        let deviceRows = try await database.select().columns("user_id", "app_id", "install_id", "name", "created_at", "last_seen_at")
            .from("user_devices").where("user_id", .in, ids).orderBy("last_seen_at", .descending).all()
        for device in deviceRows {
            devices[try device.decode(column: "user_id", as: String.self), default: []].append(
                AccountDevice(
                    appId: try device.decode(column: "app_id", as: String.self), installId: try device.decode(column: "install_id", as: String.self),
                    name: try device.decode(column: "name", as: String?.self),
                    createdAt: EpochMillis.date(try device.decode(column: "created_at", as: Int64.self)),
                    lastSeenAt: EpochMillis.date(try device.decode(column: "last_seen_at", as: Int64.self))))
        }
        return try zip(ids, rows).map { id, row in
            let identifier = AccountIdentifier(try row.decode(column: "identifier", as: String.self))
            return UserRecord(
                id: id, identifier: identifier.normalized, kind: identifier.kind,
                disabled: try row.decode(column: "disabled_at", as: Int64?.self) != nil,
                createdAt: EpochMillis.date(try row.decode(column: "created_at", as: Int64.self)),
                updatedAt: EpochMillis.date(try row.decode(column: "updated_at", as: Int64.self)),
                passwordChangedAt: EpochMillis.date(try row.decode(column: "password_changed_at", as: Int64.self)),
                lastSignInAt: try row.decode(column: "last_sign_in_at", as: Int64?.self).map(EpochMillis.date), activeSessions: active[id] ?? 0,
                devices: devices[id] ?? [])
        }
    }
}
