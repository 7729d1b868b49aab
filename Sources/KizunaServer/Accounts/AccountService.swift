import Foundation
import KizunaCore
import Logging

/// A session presented with a request and found valid.
struct AuthenticatedSession: Sendable, Hashable {
    let sessionId: String
    let kind: SessionInfo.Kind
    let account: AccountInfo
    /// When the access token presented expires.
    var expiresAt: Int64 = .max
}

/// A session just created or refreshed, with its secrets (shown once).
struct IssuedSession: Sendable {
    let id: String
    let access: SessionSecret
    let expiresAt: Int64
    let refresh: SessionSecret?
    let refreshExpiresAt: Int64?
    /// A new device token, when the sign-in did not present a valid one (apps get it in the grant, browsers as
    /// their device cookie).
    var trust: SessionSecret? = nil

    /// The wire form of an app session.
    var tokens: SessionTokens {
        SessionTokens(
            sessionId: id, accessToken: access.text, expiresAt: EpochMillis.date(expiresAt), refreshToken: refresh?.text ?? "",
            refreshExpiresAt: EpochMillis.date(refreshExpiresAt ?? expiresAt))
    }
}

/// Accounts and their sessions: every rule of sign-up, sign-in, refresh, password changes and resets, handoff codes
/// and deletion. The rows are kept by an ``AccountRepository``, whose operations are each one transaction; HTTP
/// controllers (JSON for apps, forms for the website) only translate.
struct AccountService: Sendable {
    let repository: any AccountRepository
    /// The apps registry, to refuse device registrations for apps it does not have.
    let apps: any AppRepository
    let hasher: PasswordHasher
    let sessions: SessionPolicy
    let throttle: SignInThrottle
    let logger: Logger

    // MARK: Sign-up and sign-in

    /// Creates an account and its first session.
    /// - Throws: `validation_failed` listing every failing rule of both fields, in `languages`; `conflict` when the
    ///   identifier (after normalisation) is taken; `unavailable` (with `retryAfter`) when every password-check place
    ///   is taken.
    func signUp(_ credentials: Credentials, kind: SessionInfo.Kind, languages: [String]) async throws -> (AccountInfo, IssuedSession) {
        try await hasher.reserving { try await signUpHolding(credentials, kind: kind, languages: languages) }
    }

    private func signUpHolding(_ credentials: Credentials, kind: SessionInfo.Kind, languages: [String]) async throws -> (AccountInfo, IssuedSession) {
        try AccountValidation.validate(identifier: credentials.identifier, password: credentials.password, languages: languages)
        try Self.checkDevice(credentials.device)
        try await checkAppExists(credentials.device)
        let identifier = AccountIdentifier(credentials.identifier)
        let passwordHash = try await hasher.hash(credentials.password)
        let now = EpochMillis.now
        let account = AccountInfo(id: newIdentifier("usr_"), identifier: identifier.normalized, createdAt: EpochMillis.date(now))
        let session = Self.newSession(kind: kind, device: credentials.device, policy: sessions, now: now)
        let trust = SessionSecret.generate(.trust)
        let created = try await repository.create(
            NewAccount(account: account, passwordHash: passwordHash, createdAt: now), session: session, trust: trust)
        guard created == .created else { throw Self.identifierTaken }
        logger.notice("Account created", metadata: ["user": "\(account.id)"])
        var issued = session.issued
        issued.trust = trust
        return (account, issued)
    }

    /// Checks a password and opens a session.
    ///
    /// Every path costs one password hash — an unknown identifier is checked against a dummy hash — so the answer's
    /// timing does not tell whether an account exists. Locked keys are refused before any hashing.
    /// - Throws: `throttled` (with `retryAfter`) while the identifier or the address is locked; `invalid_credentials`;
    ///   `account_disabled` (only with the right password); `unavailable` (with `retryAfter`) when every
    ///   password-check place is taken, before the store is read.
    func signIn(_ credentials: Credentials, kind: SessionInfo.Kind, address: String?) async throws -> (AccountInfo, IssuedSession) {
        try await hasher.reserving { try await signInHolding(credentials, kind: kind, address: address) }
    }

    private func signInHolding(_ credentials: Credentials, kind: SessionInfo.Kind, address: String?) async throws -> (AccountInfo, IssuedSession) {
        try Self.checkDevice(credentials.device)
        try await checkAppExists(credentials.device)
        let identifier = AccountIdentifier(credentials.identifier)
        let row = try await repository.credentials(identifier: identifier)
        // A device holding the token an earlier sign-in of this account gave it is counted on its own (OWASP's
        // device cookies): guesses from a shared carrier address, or at this identifier, do not lock its owner out.
        var keys = throttle.keys(identifier: identifier, address: address)
        let presented = credentials.trustToken.flatMap { SessionSecret($0, purpose: .trust) }
        let trusted: Bool
        if let row, let presented, try await repository.isTrusted(presented, by: row.account.id) {
            keys = [throttle.trustedKey(presented)]
            trusted = true
        } else {
            trusted = false
        }
        try await throttle.check(keys)
        let matches =
            if let row { try await hasher.verify(credentials.password, against: row.passwordHash) } else {
                try await hasher.verifyUnknownAccount(credentials.password)
            }
        guard let row, matches else {
            try await throttle.recordFailure(keys)
            throw KizunaError(.invalidCredentials, "The identifier or the password is wrong.")
        }
        guard row.disabledAt == nil else {
            throw Self.accountDisabled
        }
        try await throttle.clear(keys.filter { !$0.value.hasPrefix("address:") } + [throttle.accountKey(identifier)])
        // Hashes made with older parameters are replaced now, while the password is at hand.
        let upgraded = hasher.needsRehash(row.passwordHash) ? try await hasher.hash(credentials.password) : nil
        let now = EpochMillis.now
        let session = Self.newSession(kind: kind, device: credentials.device, policy: sessions, now: now)
        let trust: SessionSecret? = trusted ? nil : SessionSecret.generate(.trust)
        try await repository.recordSignIn(userId: row.account.id, rehashed: upgraded, session: session, trust: trust)
        if upgraded != nil { logger.info("Password hash upgraded", metadata: ["user": "\(row.account.id)"]) }
        var issued = session.issued
        issued.trust = trust
        return (row.account, issued)
    }

    // MARK: Sessions

    /// The session an access token or cookie names.
    /// - Throws: `session_expired` for an unknown, expired or signed-out token; `account_disabled`.
    func authenticate(_ token: String) async throws -> AuthenticatedSession {
        guard let secret = SessionSecret(token, purpose: .access) else { throw Self.sessionExpired }
        let now = EpochMillis.now
        guard let session = try await repository.session(accessHash: secret.hash), session.expiresAt > now else { throw Self.sessionExpired }
        guard session.disabledAt == nil else {
            throw Self.accountDisabled
        }
        // "Last used" is for the session list; minute precision spares a write on every request.
        if now - session.lastUsedAt > 60_000 {
            try await repository.touchSession(id: session.id, at: now)
        }
        return AuthenticatedSession(sessionId: session.id, kind: session.kind, account: session.account, expiresAt: session.expiresAt)
    }

    /// Whether session `id` still lets its holder in, for a connection that was let in by one of its access tokens
    /// and outlives it: the session has not been signed out and has not ended, and its account is not disabled.
    /// - Returns: When to ask again: when the session's current access token expires (or in a minute, if that has
    ///   passed and the client has not refreshed yet), and at the latest when the session ends.
    /// - Throws: `session_expired` or `account_disabled` when it no longer does.
    func standing(of id: String) async throws -> Int64 {
        let now = EpochMillis.now
        guard let standing = try await repository.standing(ofSession: id), standing.endsAt > now else { throw Self.sessionExpired }
        guard !standing.disabled else { throw Self.accountDisabled }
        let recheck = standing.accessExpiresAt > now ? standing.accessExpiresAt : now + 60_000
        return min(recheck, standing.endsAt)
    }

    /// Signs out one session of `userId` (`not_found` when it has no such session).
    func signOut(session id: String, of userId: String) async throws {
        guard try await repository.deleteSession(id: id, of: userId) else {
            throw KizunaError(.notFound, "This account has no session '\(id)'.", field: "session")
        }
    }

    /// Signs out every session of `userId`, except `keeping`.
    func signOutEverywhere(_ userId: String, keeping: String? = nil) async throws {
        try await repository.deleteSessions(of: userId, keeping: keeping)
    }

    /// The sessions of `userId` that have not expired, newest first.
    func sessions(of userId: String, current: String?) async throws -> [SessionInfo] {
        try await repository.sessions(of: userId, activeAt: EpochMillis.now).map { stored in
            var session = stored
            session.current = session.id == current
            return session
        }
    }

    // MARK: Internals

    /// A new session's secrets and lifetimes: app sessions get a short access token and a refresh token, browsers a
    /// longer cookie session.
    static func newSession(kind: SessionInfo.Kind, device: DeviceRegistration?, policy: SessionPolicy, now: Int64) -> NewSession {
        let access = SessionSecret.generate(.access)
        let refresh = kind == .app ? SessionSecret.generate(.refresh) : nil
        let issued = IssuedSession(
            id: newIdentifier("ses_"), access: access,
            expiresAt: now + (kind == .app ? policy.accessLifetime : policy.webLifetime).milliseconds, refresh: refresh,
            refreshExpiresAt: refresh.map { _ in now + policy.refreshLifetime.milliseconds })
        return NewSession(issued: issued, kind: kind, device: device, createdAt: now)
    }

    /// Refuses a device registration for an app the registry does not have.
    private func checkAppExists(_ device: DeviceRegistration?) async throws {
        guard let device else { return }
        guard try await apps.find(id: device.appId) != nil else {
            throw KizunaError(.validationFailed, "There is no app with id '\(device.appId)'; register it first.", field: "device.appId")
        }
    }

    static func checkDevice(_ device: DeviceRegistration?) throws(KizunaError) {
        guard let device else { return }
        if device.appId.isEmpty || device.appId.count > 64 || device.installId.isEmpty || device.installId.count > 128
            || (device.name?.count ?? 0) > 100
        {
            throw KizunaError(
                .validationFailed, "The device needs an appId (≤ 64), an installId (≤ 128) and at most a 100-character name.", field: "device")
        }
    }

    static var accountDisabled: KizunaError {
        KizunaError(.accountDisabled, "This account has been disabled. Contact the app's support.")
    }

    static var sessionExpired: KizunaError {
        KizunaError(.sessionExpired, "The session has expired or was signed out; sign in again.")
    }

    static var identifierTaken: KizunaError {
        KizunaError(.conflict, "An account with this identifier already exists (identifiers ignore case and character width).", field: "identifier")
    }

    static var badResetToken: KizunaError {
        KizunaError(.sessionExpired, "This password-reset link has expired or was already used; ask for a new one.", field: "token")
    }

    static var badHandoff: KizunaError {
        KizunaError(.sessionExpired, "This sign-in link has expired or was already used; open it again from the app.", field: "code")
    }
}
