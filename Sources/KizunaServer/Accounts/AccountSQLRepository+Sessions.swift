import Foundation
import KizunaCore
import SQLKit

/// Sessions: lookup by access token, listing, sign-out, and the refresh exchange.
extension AccountSQLRepository {
    func session(accessHash: String) async throws -> StoredSession? {
        let row = try await database.raw(
            """
            SELECT s.id, s.kind, s.expires_at, s.last_used_at, u.id AS user_id, u.identifier, u.created_at, u.disabled_at
            FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = \(bind: accessHash)
            """
        ).first()
        guard let row else { return nil }
        return StoredSession(
            id: try row.decode(column: "id", as: String.self),
            kind: SessionInfo.Kind(rawValue: try row.decode(column: "kind", as: String.self)) ?? .web,
            expiresAt: try row.decode(column: "expires_at", as: Int64.self), lastUsedAt: try row.decode(column: "last_used_at", as: Int64.self),
            account: try Self.info(row, id: "user_id"), disabledAt: try row.decode(column: "disabled_at", as: Int64?.self))
    }

    func touchSession(id: String, at now: Int64) async throws {
        try await database.transaction { db in
            try await db.update("sessions").set("last_used_at", to: SQLBind(now)).where("id", .equal, SQLBind(id)).run()
        }
    }

    func standing(ofSession id: String) async throws -> SessionStanding? {
        let row = try await database.raw(
            """
            SELECT s.expires_at, s.refresh_expires_at, u.disabled_at
            FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.id = \(bind: id)
            """
        ).first()
        guard let row else { return nil }
        let access = try row.decode(column: "expires_at", as: Int64.self)
        return SessionStanding(
            accessExpiresAt: access, endsAt: try row.decode(column: "refresh_expires_at", as: Int64?.self) ?? access,
            disabled: try row.decode(column: "disabled_at", as: Int64?.self) != nil)
    }

    func deleteSession(id: String, of userId: String) async throws -> Bool {
        try await endingSessions { db -> Bool in
            guard
                try await db.select().column("id").from("sessions").where("id", .equal, SQLBind(id)).where("user_id", .equal, SQLBind(userId)).first()
                    != nil
            else { return false }
            try await PushDeviceRepository.unlink(userId: userId, signingOut: .session(id), on: db)
            try await db.delete(from: "sessions").where("id", .equal, SQLBind(id)).run()
            try await SessionEvents.ended(userId: userId, on: db)
            return true
        }
    }

    func deleteSessions(of userId: String, keeping: String?) async throws {
        try await endingSessions { db in
            try await PushDeviceRepository.unlink(userId: userId, signingOut: .allBut(keeping), on: db)
            let query = db.delete(from: "sessions").where("user_id", .equal, SQLBind(userId))
            if let keeping { query.where("id", .notEqual, SQLBind(keeping)) }
            try await query.run()
            try await SessionEvents.ended(userId: userId, on: db)
        }
    }

    func sessions(of userId: String, activeAt now: Int64) async throws -> [SessionInfo] {
        try await database.select()
            .columns("id", "kind", "app_id", "install_id", "name", "created_at", "last_used_at", "expires_at", "refresh_expires_at")
            .from("sessions").where("user_id", .equal, SQLBind(userId)).orderBy("created_at", .descending).all()
            .compactMap { row in
                let expires = try row.decode(column: "refresh_expires_at", as: Int64?.self) ?? row.decode(column: "expires_at", as: Int64.self)
                guard expires > now else { return nil }
                return SessionInfo(
                    id: try row.decode(column: "id", as: String.self),
                    kind: SessionInfo.Kind(rawValue: try row.decode(column: "kind", as: String.self)) ?? .web,
                    appId: try row.decode(column: "app_id", as: String?.self), installId: try row.decode(column: "install_id", as: String?.self),
                    name: try row.decode(column: "name", as: String?.self),
                    createdAt: EpochMillis.date(try row.decode(column: "created_at", as: Int64.self)),
                    lastUsedAt: EpochMillis.date(try row.decode(column: "last_used_at", as: Int64.self)), expiresAt: EpochMillis.date(expires),
                    current: false)
            }
    }

    // MARK: Refresh

    func exchangeRefresh(
        _ rotation: RefreshRotation, answerRetry: @escaping @Sendable (ReusedRefresh) -> IssuedSession?
    ) async throws -> RefreshOutcome {
        // Two refreshes racing with one token: on PostgreSQL the second waits for the first to commit, then finds the
        // token exchanged and is answered as a retry (SQLite's writers already take turns).
        let lock = database.engine == .postgres ? " FOR UPDATE OF s" : ""
        let presented = rotation.presented
        let now = rotation.now
        return try await endingSessions { db -> RefreshOutcome in
            let row = try await db.raw(
                """
                SELECT s.id, s.refresh_expires_at, u.id AS user_id, u.identifier, u.created_at, u.disabled_at
                FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.refresh_hash = \(bind: presented.hash)\(unsafeRaw: lock)
                """
            ).first()
            guard let row else { return try await Self.refreshReused(presented, answerRetry: answerRetry, db) }
            guard try row.decode(column: "refresh_expires_at", as: Int64?.self).map({ $0 > now }) == true else { return .expired }
            guard try row.decode(column: "disabled_at", as: Int64?.self) == nil else { return .disabled }
            let id = try row.decode(column: "id", as: String.self)
            let issued = IssuedSession(
                id: id, access: rotation.access, expiresAt: rotation.expiresAt, refresh: rotation.refresh, refreshExpiresAt: rotation.refreshExpiresAt
            )
            try await db.insert(into: "retired_refresh_tokens").columns("refresh_hash", "session_id", "retired_at")
                .values(SQLBind(presented.hash), SQLBind(id), SQLBind(now)).run()
            // A token retired longer ago than a refresh token lives is no longer worth remembering; one exchange in a
            // hundred sweeps them, so the table stays bounded however long sessions keep rotating.
            if Int.random(in: 0..<100) == 0 {
                try await db.delete(from: "retired_refresh_tokens").where("retired_at", .lessThan, SQLBind(rotation.forgetRetiredBefore)).run()
            }
            try await db.update("sessions")
                .set("token_hash", to: SQLBind(rotation.access.hash)).set("refresh_hash", to: SQLBind(rotation.refresh.hash))
                .set("previous_refresh_hash", to: SQLBind(presented.hash)).set("expires_at", to: SQLBind(issued.expiresAt))
                .set("refresh_expires_at", to: SQLBind(issued.refreshExpiresAt)).set("last_used_at", to: SQLBind(now))
                .set("rotated_at", to: SQLBind(now)).set("refresh_grace", to: SQLBind(try RefreshGrace.seal(issued, under: presented)))
                .where("id", .equal, SQLBind(id)).run()
            return .rotated(try Self.info(row, id: "user_id"), issued)
        }
    }

    /// A refresh token that is not a session's current one: the lost answer of the last exchange again, or a reused
    /// token whose session is deleted (the deletion commits with the transaction).
    private static func refreshReused(
        _ presented: SessionSecret, answerRetry: @Sendable (ReusedRefresh) -> IssuedSession?, _ db: any SQLDatabase
    ) async throws -> RefreshOutcome {
        // Tokens exchanged before the families were recorded are still known as the session's previous one.
        let family = try await db.raw(
            """
            SELECT session_id AS id FROM retired_refresh_tokens WHERE refresh_hash = \(bind: presented.hash)
            UNION SELECT id FROM sessions WHERE previous_refresh_hash = \(bind: presented.hash)
            """
        ).first()
        guard let family else { return .unknown }  // never issued, or its session is gone
        let id = try family.decode(column: "id", as: String.self)
        let row = try await db.raw(
            """
            SELECT s.id, s.previous_refresh_hash, s.rotated_at, s.install_id, s.refresh_grace, s.refresh_expires_at,
                u.id AS user_id, u.identifier, u.created_at, u.disabled_at
            FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.id = \(bind: id)
            """
        ).first()
        guard let row else { return .unknown }
        let reused = ReusedRefresh(
            sessionId: id, isLast: try row.decode(column: "previous_refresh_hash", as: String?.self) == presented.hash,
            rotatedAt: try row.decode(column: "rotated_at", as: Int64?.self) ?? 0, installId: try row.decode(column: "install_id", as: String?.self),
            disabled: try row.decode(column: "disabled_at", as: Int64?.self) != nil,
            sealedAnswer: try row.decode(column: "refresh_grace", as: String?.self))
        if let issued = answerRetry(reused) {
            // Once: whoever presents the same token again after this holds a copy.
            try await db.update("sessions").set("refresh_grace", to: SQLLiteral.null).where("id", .equal, SQLBind(id)).run()
            return .retried(try info(row, id: "user_id"), issued)
        }
        try await db.delete(from: "sessions").where("id", .equal, SQLBind(id)).run()
        try await SessionEvents.ended(userId: try row.decode(column: "user_id", as: String.self), on: db)
        return .signedOut(reused)
    }
}
