import Foundation
import KizunaCore
import Logging
import SQLKit

/// Password changes, resets and account deletion, and the web-view handoff.
extension AccountService {
    /// Changes the password after checking the current one; every other session is signed out.
    /// - Throws: `invalid_credentials` for a wrong current password (counted like a failed sign-in);
    ///   `validation_failed` for a weak new one.
    func changePassword(_ session: AuthenticatedSession, _ change: ChangePasswordRequest, languages: [String]) async throws {
        try await hasher.reserving {
            try await checkPassword(change.currentPassword, field: "currentPassword", of: session)
            try await setPassword(change.newPassword, of: session.account, keepingSession: session.sessionId, languages: languages)
        }
    }

    /// Deletes the account after checking its password: its sessions, devices and codes go with it.
    func deleteAccount(_ session: AuthenticatedSession, password: String) async throws {
        try await hasher.reserving { try await checkPassword(password, field: "password", of: session) }
        try await delete(userId: session.account.id)
    }

    /// Deletes an account and everything that hangs off it.
    func delete(userId: String) async throws {
        try await database.transaction { db in
            // The foreign keys cascade; the explicit deletes keep this true on a store where they were switched off.
            for table in ["one_time_codes", "sessions", "user_devices", "trusted_devices"] {
                try await db.delete(from: table).where("user_id", .equal, SQLBind(userId)).run()
            }
            try await db.delete(from: "users").where("id", .equal, SQLBind(userId)).run()
        }
        logger.notice("Account deleted", metadata: ["user": "\(userId)"])
    }

    /// Sets a new password after a reset token is redeemed; the token works once, and every session is signed out.
    func resetPassword(_ request: ResetPasswordRequest, languages: [String]) async throws {
        guard let secret = SessionSecret(request.token, purpose: .passwordReset) else { throw Self.badResetToken }
        let code = try await database.select().columns("user_id", "expires_at").from("one_time_codes")
            .where("code_hash", .equal, SQLBind(secret.hash)).where("purpose", .equal, SQLBind("password_reset")).first()
        guard let code, try code.decode(column: "expires_at", as: Int64.self) > EpochMillis.now,
            let account = try await account(id: try code.decode(column: "user_id", as: String.self))
        else { throw Self.badResetToken }
        try await setPassword(request.newPassword, of: account, keepingSession: nil, languages: languages, consuming: secret.hash)
        try await throttle.clear(identifier: AccountIdentifier(account.identifier))
    }

    /// A reset token for an operator to hand to the account's owner; earlier tokens of the account stop working.
    func createResetToken(userId: String) async throws -> (SessionSecret, Int64) {
        let secret = SessionSecret.generate(.passwordReset)
        let now = EpochMillis.now
        let expires = now + sessions.resetLifetime.milliseconds
        try await database.transaction { db in
            try await db.delete(from: "one_time_codes").where("user_id", .equal, SQLBind(userId))
                .where("purpose", .equal, SQLBind("password_reset")).run()
            try await db.insert(into: "one_time_codes").columns("code_hash", "purpose", "user_id", "created_at", "expires_at")
                .values(SQLBind(secret.hash), SQLBind("password_reset"), SQLBind(userId), SQLBind(now), SQLBind(expires)).run()
        }
        logger.notice("Password reset token issued", metadata: ["user": "\(userId)"])
        return (secret, expires)
    }

    // MARK: Web-view handoff

    /// A single-use code, valid for ``SessionPolicy/handoffLifetime``, that a web view redeems for a cookie session
    /// of the same account. It dies with the session that asked for it.
    func createHandoff(_ session: AuthenticatedSession, next: String) async throws -> (SessionSecret, Int64) {
        let secret = SessionSecret.generate(.handoff)
        let now = EpochMillis.now
        let expires = now + sessions.handoffLifetime.milliseconds
        try await database.transaction { db in
            try await db.insert(into: "one_time_codes")
                .columns("code_hash", "purpose", "user_id", "session_id", "next_path", "created_at", "expires_at")
                .values(
                    SQLBind(secret.hash), SQLBind("handoff"), SQLBind(session.account.id), SQLBind(session.sessionId), SQLBind(next), SQLBind(now),
                    SQLBind(expires)
                )
                .run()
        }
        return (secret, expires)
    }

    /// Redeems a handoff code: it is deleted whatever happens next, and a new cookie session starts.
    /// - Returns: The new session and the path to land on.
    /// - Throws: `session_expired` for an unknown, used or expired code, or one whose app session has ended.
    func redeemHandoff(_ code: String) async throws -> (IssuedSession, String) {
        guard let secret = SessionSecret(code, purpose: .handoff) else { throw Self.badHandoff }
        let now = EpochMillis.now
        let policy = sessions
        let result: (IssuedSession, String)? = try await database.transaction { db in
            let row = try await db.select().columns("user_id", "session_id", "next_path", "expires_at").from("one_time_codes")
                .where("code_hash", .equal, SQLBind(secret.hash)).where("purpose", .equal, SQLBind("handoff")).for(.update).first()
            guard let row else { return nil }
            try await db.delete(from: "one_time_codes").where("code_hash", .equal, SQLBind(secret.hash)).run()
            guard try row.decode(column: "expires_at", as: Int64.self) > now,
                let origin = try row.decode(column: "session_id", as: String?.self),
                let source = try await db.select().column("expires_at").column("refresh_expires_at").from("sessions")
                    .where("id", .equal, SQLBind(origin)).first(),
                try (source.decode(column: "refresh_expires_at", as: Int64?.self) ?? source.decode(column: "expires_at", as: Int64.self)) > now
            else { return nil }
            let userId = try row.decode(column: "user_id", as: String.self)
            guard
                try await db.select().column("id").from("users").where("id", .equal, SQLBind(userId))
                    .where(SQLColumn("disabled_at"), .is, SQLLiteral.null).first() != nil
            else { return nil }
            let issued = try await Self.createSession(for: userId, kind: .web, device: nil, policy: policy, now: now, db)
            return (issued, try row.decode(column: "next_path", as: String?.self) ?? "/account")
        }
        guard let result else { throw Self.badHandoff }
        return result
    }

    /// Checks a signed-in account's password, with the same throttling as sign-in.
    ///
    /// The failures are counted against the session alone: the session already proves a device that signed in, so
    /// neither a busy shared address nor someone guessing at the identifier can stop its owner changing the password,
    /// while a stolen session still gets only a few guesses.
    func checkPassword(_ password: String, field: String, of session: AuthenticatedSession) async throws {
        let account = session.account
        let keys = [throttle.sessionKey(session.sessionId)]
        try await throttle.check(keys)
        let stored = try await database.select().column("password_hash").from("users").where("id", .equal, SQLBind(account.id)).first()
            .map { try $0.decode(column: "password_hash", as: String.self) }
        guard let stored, try await hasher.verify(password, against: stored) else {
            try await throttle.recordFailure(keys)
            throw KizunaError(.invalidCredentials, "The current password is wrong.", field: field)
        }
    }

    func setPassword(
        _ password: String, of account: AccountInfo, keepingSession: String?, languages: [String], consuming code: String? = nil
    ) async throws {
        var report = ValidationReport()
        report.check(
            PasswordCandidate(password: password, identifier: account.identifier), with: AccountValidation.password.reporting(as: "newPassword"),
            languages: languages)
        try report.throwIfFailed("The new password")
        let hash = try await hasher.hash(password)
        let now = EpochMillis.now
        try await database.transaction { db in
            if let code {
                // Consumed in the same transaction: a token redeemed twice at once sets the password only once.
                guard
                    try await db.select().column("code_hash").from("one_time_codes").where("code_hash", .equal, SQLBind(code)).for(.update).first()
                        != nil
                else { throw Self.badResetToken }
                try await db.delete(from: "one_time_codes").where("code_hash", .equal, SQLBind(code)).run()
            }
            try await db.update("users").set("password_hash", to: SQLBind(hash)).set("password_changed_at", to: SQLBind(now))
                .set("updated_at", to: SQLBind(now)).where("id", .equal, SQLBind(account.id)).run()
            let others = db.delete(from: "sessions").where("user_id", .equal, SQLBind(account.id))
            if let keepingSession { others.where("id", .notEqual, SQLBind(keepingSession)) }
            try await others.run()
        }
        logger.notice("Password changed", metadata: ["user": "\(account.id)"])
    }
}
