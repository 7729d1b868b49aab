import Foundation
import KizunaCore
import Logging

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
        try await repository.delete(userId: userId)
        logger.notice("Account deleted", metadata: ["user": "\(userId)"])
    }

    /// Sets a new password after a reset token is redeemed; the token works once, and every session is signed out.
    func resetPassword(_ request: ResetPasswordRequest, languages: [String]) async throws {
        guard let (account, secret) = try await resetTarget(token: request.token) else { throw Self.badResetToken }
        try await setPassword(request.newPassword, of: account, keepingSession: nil, languages: languages, consuming: secret.hash)
        try await throttle.clear(identifier: AccountIdentifier(account.identifier))
    }

    /// The account a reset token would reset, without using the token (the reset page shows whose password it sets,
    /// and gives password managers the username); `nil` for an unknown, used or expired token.
    func resetAccount(token: String) async throws -> AccountInfo? {
        try await resetTarget(token: token)?.account
    }

    private func resetTarget(token: String) async throws -> (account: AccountInfo, secret: SessionSecret)? {
        guard let secret = SessionSecret(token, purpose: .passwordReset),
            let code = try await repository.resetCode(hash: secret.hash), code.expiresAt > EpochMillis.now,
            let account = try await account(id: code.userId)
        else { return nil }
        return (account, secret)
    }

    /// A reset token for an operator to hand to the account's owner; earlier tokens of the account stop working.
    func createResetToken(userId: String) async throws -> (SessionSecret, Int64) {
        let secret = SessionSecret.generate(.passwordReset)
        let now = EpochMillis.now
        let expires = now + sessions.resetLifetime.milliseconds
        try await repository.replaceResetCode(hash: secret.hash, userId: userId, createdAt: now, expiresAt: expires)
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
        try await repository.createHandoff(
            hash: secret.hash, userId: session.account.id, sessionId: session.sessionId, next: next, createdAt: now, expiresAt: expires)
        return (secret, expires)
    }

    /// Redeems a handoff code: it is deleted whatever happens next, and a new cookie session starts.
    /// - Returns: The new session and the path to land on.
    /// - Throws: `session_expired` for an unknown, used or expired code, or one whose app session has ended.
    func redeemHandoff(_ code: String) async throws -> (IssuedSession, String) {
        guard let secret = SessionSecret(code, purpose: .handoff) else { throw Self.badHandoff }
        let now = EpochMillis.now
        let session = Self.newSession(kind: .web, device: nil, policy: sessions, now: now)
        guard let redeemed = try await repository.redeemHandoff(hash: secret.hash, at: now, session: session) else { throw Self.badHandoff }
        return (session.issued, redeemed.next ?? "/account")
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
        let stored = try await repository.passwordHash(userId: account.id)
        guard let stored, try await hasher.verify(password, against: stored) else {
            try await throttle.recordFailure(keys)
            throw KizunaError(.invalidCredentials, "The current password is wrong.", field: field)
        }
    }

    /// Validates and stores a new password, signing out every session but `keepingSession`; with `code` (the hash of
    /// a reset token) the token is consumed with it, once.
    /// - Throws: `validation_failed` for a weak password; `session_expired` when `code` was already used.
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
        guard try await repository.setPassword(userId: account.id, hash: hash, at: now, keepingSession: keepingSession, consumingCode: code) else {
            throw Self.badResetToken
        }
        logger.notice("Password changed", metadata: ["user": "\(account.id)"])
    }
}
