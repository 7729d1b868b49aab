import Foundation
import KizunaCore
import Logging
import SQLKit

extension AccountService {
    /// Exchanges a refresh token for new tokens; the old refresh token stops working.
    ///
    /// Every refresh token a session has exchanged is remembered. One presented again means two parties hold it — a
    /// stolen copy, most likely — so the session is signed out and both must sign in again; the one exception is the
    /// token exchanged last, presented again from the session's own install within ``SessionPolicy/refreshReuseGrace``:
    /// that is a client whose answer was lost, and it gets the same new pair again, once.
    func refresh(_ request: RefreshRequest) async throws -> (AccountInfo, IssuedSession) {
        guard let secret = SessionSecret(request.refreshToken, purpose: .refresh) else { throw Self.sessionExpired }
        let now = EpochMillis.now
        let policy = sessions
        let logger = logger
        // Two refreshes racing with one token: on PostgreSQL the second waits for the first to commit, then finds the
        // token exchanged and is answered as a retry (SQLite's writers already take turns).
        let lock = database.engine == .postgres ? " FOR UPDATE OF s" : ""
        let outcome = try await database.transaction { db -> (AccountInfo, IssuedSession)? in
            let row = try await db.raw(
                """
                SELECT s.id, s.refresh_expires_at, u.id AS user_id, u.identifier, u.created_at, u.disabled_at
                FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.refresh_hash = \(bind: secret.hash)\(unsafeRaw: lock)
                """
            ).first()
            guard let row else {
                return try await Self.refreshReused(secret, installId: request.installId, now: now, policy: policy, logger: logger, db)
            }
            guard try row.decode(column: "refresh_expires_at", as: Int64?.self).map({ $0 > now }) == true else { throw Self.sessionExpired }
            guard try row.decode(column: "disabled_at", as: Int64?.self) == nil else {
                throw Self.accountDisabled
            }
            let id = try row.decode(column: "id", as: String.self)
            let access = SessionSecret.generate(.access)
            let refresh = SessionSecret.generate(.refresh)
            let issued = IssuedSession(
                id: id, access: access, expiresAt: now + policy.accessLifetime.milliseconds, refresh: refresh,
                refreshExpiresAt: now + policy.refreshLifetime.milliseconds)
            try await db.insert(into: "retired_refresh_tokens").columns("refresh_hash", "session_id", "retired_at")
                .values(SQLBind(secret.hash), SQLBind(id), SQLBind(now)).run()
            // A token retired longer ago than a refresh token lives is no longer worth remembering; one exchange in a
            // hundred sweeps them, so the table stays bounded however long sessions keep rotating.
            if Int.random(in: 0..<100) == 0 {
                try await db.delete(from: "retired_refresh_tokens")
                    .where("retired_at", .lessThan, SQLBind(now - policy.refreshLifetime.milliseconds)).run()
            }
            try await db.update("sessions")
                .set("token_hash", to: SQLBind(access.hash)).set("refresh_hash", to: SQLBind(refresh.hash))
                .set("previous_refresh_hash", to: SQLBind(secret.hash)).set("expires_at", to: SQLBind(issued.expiresAt))
                .set("refresh_expires_at", to: SQLBind(issued.refreshExpiresAt)).set("last_used_at", to: SQLBind(now))
                .set("rotated_at", to: SQLBind(now)).set("refresh_grace", to: SQLBind(try RefreshGrace.seal(issued, under: secret)))
                .where("id", .equal, SQLBind(id)).run()
            return (try Self.info(row, id: "user_id"), issued)
        }
        guard let outcome else { throw Self.sessionExpired }
        return outcome
    }

    /// A refresh token that is not the session's current one: the lost answer of the last exchange again, or a
    /// reused token whose session is signed out (the deletion commits with the transaction). `nil`: refuse.
    private static func refreshReused(
        _ secret: SessionSecret, installId: String?, now: Int64, policy: SessionPolicy, logger: Logger, _ db: any SQLDatabase
    ) async throws -> (AccountInfo, IssuedSession)? {
        // Tokens exchanged before the families were recorded are still known as the session's previous one.
        let family = try await db.raw(
            """
            SELECT session_id AS id FROM retired_refresh_tokens WHERE refresh_hash = \(bind: secret.hash)
            UNION SELECT id FROM sessions WHERE previous_refresh_hash = \(bind: secret.hash)
            """
        ).first()
        guard let family else { return nil }  // never issued, or its session is gone
        let id = try family.decode(column: "id", as: String.self)
        let row = try await db.raw(
            """
            SELECT s.id, s.previous_refresh_hash, s.rotated_at, s.install_id, s.refresh_grace, s.refresh_expires_at,
                u.id AS user_id, u.identifier, u.created_at, u.disabled_at
            FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.id = \(bind: id)
            """
        ).first()
        guard let row else { return nil }
        let isLast = try row.decode(column: "previous_refresh_hash", as: String?.self) == secret.hash
        let rotatedAt = try row.decode(column: "rotated_at", as: Int64?.self) ?? 0
        let sessionInstall = try row.decode(column: "install_id", as: String?.self)
        if isLast, now - rotatedAt <= policy.refreshReuseGrace.milliseconds, let sessionInstall, sessionInstall == installId,
            try row.decode(column: "disabled_at", as: Int64?.self) == nil,
            let sealed = try row.decode(column: "refresh_grace", as: String?.self), let issued = RefreshGrace.open(sealed, with: secret, session: id)
        {
            // Once: whoever presents the same token again after this holds a copy.
            try await db.update("sessions").set("refresh_grace", to: SQLLiteral.null).where("id", .equal, SQLBind(id)).run()
            logger.info("A refresh was retried within the grace period; the same tokens were sent again", metadata: ["session": "\(id)"])
            return (try info(row, id: "user_id"), issued)
        }
        try await db.delete(from: "sessions").where("id", .equal, SQLBind(id)).run()
        logger.warning(
            "A refresh token was used after it had been exchanged; its session is signed out",
            metadata: ["session": "\(id)", "last": "\(isLast)", "sameInstall": "\(sessionInstall != nil && sessionInstall == installId)"])
        return nil
    }
}
