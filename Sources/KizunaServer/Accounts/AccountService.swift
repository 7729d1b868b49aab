import Foundation
import KizunaCore
import Logging
import SQLKit

/// A session presented with a request and found valid.
struct AuthenticatedSession: Sendable, Hashable {
    let sessionId: String
    let kind: SessionInfo.Kind
    let account: AccountInfo
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
/// and deletion, over the store. HTTP controllers (JSON for apps, forms for the website) only translate.
///
/// Every write goes through ``KizunaDatabase/transaction(_:)``, even single statements: on SQLite that queues
/// writers as suspended tasks instead of letting them block the shared thread pool (which also hashes passwords)
/// in SQLite's busy wait.
struct AccountService: Sendable {
    let database: KizunaDatabase
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
        try await Self.checkAppExists(credentials.device, database)
        let identifier = AccountIdentifier(credentials.identifier)
        let passwordHash = try await hasher.hash(credentials.password)
        let now = EpochMillis.now
        let account = AccountInfo(id: newIdentifier("usr_"), identifier: identifier.normalized, createdAt: EpochMillis.date(now))
        let sessions = sessions
        do {
            let issued = try await database.transaction { db in
                if try await Self.userRow(identifier: identifier, db) != nil { throw Self.identifierTaken }
                try await db.insert(into: "users")
                    .columns("id", "identifier", "password_hash", "created_at", "updated_at", "password_changed_at", "last_sign_in_at")
                    .values(
                        SQLBind(account.id), SQLBind(identifier.normalized), SQLBind(passwordHash), SQLBind(now), SQLBind(now), SQLBind(now),
                        SQLBind(now)
                    )
                    .run()
                var issued = try await Self.createSession(for: account.id, kind: kind, device: credentials.device, policy: sessions, now: now, db)
                issued.trust = try await Self.trustDevice(of: account.id, now: now, db)
                return issued
            }
            logger.notice("Account created", metadata: ["user": "\(account.id)"])
            return (account, issued)
        } catch let error as KizunaError {
            throw error
        } catch {
            // Two sign-ups racing for one identifier: the unique index stops the second.
            if try await Self.userRow(identifier: identifier, database) != nil { throw Self.identifierTaken }
            throw error
        }
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
        try await Self.checkAppExists(credentials.device, database)
        let identifier = AccountIdentifier(credentials.identifier)
        let row = try await Self.userRow(identifier: identifier, database)
        // A device holding the token an earlier sign-in of this account gave it is counted on its own (OWASP's
        // device cookies): guesses from a shared carrier address, or at this identifier, do not lock its owner out.
        var keys = throttle.keys(identifier: identifier, address: address)
        let presented = credentials.trustToken.flatMap { SessionSecret($0, purpose: .trust) }
        let trusted: Bool
        if let row, let presented, try await Self.trusts(presented, for: row.account.id, database) {
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
        let sessions = sessions
        let issued = try await database.transaction { db in
            let update = db.update("users").set("last_sign_in_at", to: SQLBind(now))
            if let upgraded { update.set("password_hash", to: SQLBind(upgraded)) }
            try await update.where("id", .equal, SQLBind(row.account.id)).run()
            var issued = try await Self.createSession(for: row.account.id, kind: kind, device: credentials.device, policy: sessions, now: now, db)
            if !trusted { issued.trust = try await Self.trustDevice(of: row.account.id, now: now, db) }
            return issued
        }
        if upgraded != nil { logger.info("Password hash upgraded", metadata: ["user": "\(row.account.id)"]) }
        return (row.account, issued)
    }

    // MARK: Sessions

    /// The session an access token or cookie names.
    /// - Throws: `session_expired` for an unknown, expired or signed-out token; `account_disabled`.
    func authenticate(_ token: String) async throws -> AuthenticatedSession {
        guard let secret = SessionSecret(token, purpose: .access) else { throw Self.sessionExpired }
        let now = EpochMillis.now
        let row = try await database.raw(
            """
            SELECT s.id, s.kind, s.expires_at, s.last_used_at, u.id AS user_id, u.identifier, u.created_at, u.disabled_at
            FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = \(bind: secret.hash)
            """
        ).first()
        guard let row, try row.decode(column: "expires_at", as: Int64.self) > now else { throw Self.sessionExpired }
        guard try row.decode(column: "disabled_at", as: Int64?.self) == nil else {
            throw Self.accountDisabled
        }
        let id = try row.decode(column: "id", as: String.self)
        // "Last used" is for the session list; minute precision spares a write on every request.
        if now - (try row.decode(column: "last_used_at", as: Int64.self)) > 60_000 {
            try await database.transaction { db in
                try await db.update("sessions").set("last_used_at", to: SQLBind(now)).where("id", .equal, SQLBind(id)).run()
            }
        }
        return AuthenticatedSession(
            sessionId: id,
            kind: SessionInfo.Kind(rawValue: try row.decode(column: "kind", as: String.self)) ?? .web,
            account: try Self.info(row, id: "user_id"))
    }

    /// Signs out one session of `userId` (`not_found` when it has no such session).
    func signOut(session id: String, of userId: String) async throws {
        try await database.transaction { db in
            guard
                try await db.select().column("id").from("sessions").where("id", .equal, SQLBind(id)).where("user_id", .equal, SQLBind(userId)).first()
                    != nil
            else { throw KizunaError(.notFound, "This account has no session '\(id)'.", field: "session") }
            try await db.delete(from: "sessions").where("id", .equal, SQLBind(id)).run()
        }
    }

    /// Signs out every session of `userId`, except `keeping`.
    func signOutEverywhere(_ userId: String, keeping: String? = nil) async throws {
        try await database.transaction { db in
            let query = db.delete(from: "sessions").where("user_id", .equal, SQLBind(userId))
            if let keeping { query.where("id", .notEqual, SQLBind(keeping)) }
            try await query.run()
        }
    }

    /// The sessions of `userId` that have not expired, newest first.
    func sessions(of userId: String, current: String?) async throws -> [SessionInfo] {
        let now = EpochMillis.now
        return try await database.select()
            .columns("id", "kind", "app_id", "install_id", "name", "created_at", "last_used_at", "expires_at", "refresh_expires_at")
            .from("sessions").where("user_id", .equal, SQLBind(userId)).orderBy("created_at", .descending).all()
            .compactMap { row in
                let expires = try row.decode(column: "refresh_expires_at", as: Int64?.self) ?? row.decode(column: "expires_at", as: Int64.self)
                guard expires > now else { return nil }
                let id = try row.decode(column: "id", as: String.self)
                return SessionInfo(
                    id: id, kind: SessionInfo.Kind(rawValue: try row.decode(column: "kind", as: String.self)) ?? .web,
                    appId: try row.decode(column: "app_id", as: String?.self), installId: try row.decode(column: "install_id", as: String?.self),
                    name: try row.decode(column: "name", as: String?.self),
                    createdAt: EpochMillis.date(try row.decode(column: "created_at", as: Int64.self)),
                    lastUsedAt: EpochMillis.date(try row.decode(column: "last_used_at", as: Int64.self)), expiresAt: EpochMillis.date(expires),
                    current: id == current)
            }
    }

    // MARK: Internals

    struct UserRow {
        let account: AccountInfo
        let passwordHash: String
        let disabledAt: Int64?
    }

    static func createSession(
        for userId: String, kind: SessionInfo.Kind, device: DeviceRegistration?, policy: SessionPolicy, now: Int64, _ db: any SQLDatabase
    ) async throws -> IssuedSession {
        let access = SessionSecret.generate(.access)
        let refresh = kind == .app ? SessionSecret.generate(.refresh) : nil
        let issued = IssuedSession(
            id: newIdentifier("ses_"), access: access,
            expiresAt: now + (kind == .app ? policy.accessLifetime : policy.webLifetime).milliseconds, refresh: refresh,
            refreshExpiresAt: refresh.map { _ in now + policy.refreshLifetime.milliseconds })
        try await db.insert(into: "sessions")
            .columns(
                "id", "user_id", "kind", "token_hash", "refresh_hash", "app_id", "install_id", "name", "created_at", "last_used_at", "expires_at",
                "refresh_expires_at"
            )
            .values(
                SQLBind(issued.id), SQLBind(userId), SQLBind(kind.rawValue), SQLBind(access.hash), SQLBind(refresh?.hash), SQLBind(device?.appId),
                SQLBind(device?.installId), SQLBind(device?.name), SQLBind(now), SQLBind(now), SQLBind(issued.expiresAt),
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
        return issued
    }

    static func userRow(identifier: AccountIdentifier, _ db: any SQLDatabase) async throws -> UserRow? {
        try await db.select().columns("id", "identifier", "created_at", "password_hash", "disabled_at").from("users")
            .where("identifier", .equal, SQLBind(identifier.normalized)).first()
            .map { row in
                UserRow(
                    account: try info(row), passwordHash: try row.decode(column: "password_hash", as: String.self),
                    disabledAt: try row.decode(column: "disabled_at", as: Int64?.self))
            }
    }

    /// Whether `token` was issued at a successful sign-in (or sign-up) of `userId`.
    private static func trusts(_ token: SessionSecret, for userId: String, _ db: any SQLDatabase) async throws -> Bool {
        try await db.select().column("user_id").from("trusted_devices").where("token_hash", .equal, SQLBind(token.hash))
            .where("user_id", .equal, SQLBind(userId)).first() != nil
    }

    /// A new device token for `userId`, stored hashed.
    private static func trustDevice(of userId: String, now: Int64, _ db: any SQLDatabase) async throws -> SessionSecret {
        let token = SessionSecret.generate(.trust)
        try await db.insert(into: "trusted_devices").columns("token_hash", "user_id", "created_at")
            .values(SQLBind(token.hash), SQLBind(userId), SQLBind(now)).run()
        return token
    }

    /// Refuses a device registration for an app the registry does not have.
    static func checkAppExists(_ device: DeviceRegistration?, _ db: any SQLDatabase) async throws {
        guard let device else { return }
        guard try await db.select().column("id").from("apps").where("id", .equal, SQLBind(device.appId)).first() != nil else {
            throw KizunaError(.validationFailed, "There is no app with id '\(device.appId)'; register it first.", field: "device.appId")
        }
    }

    /// The account in a row with `identifier`, `created_at` and its id in column `id`.
    static func info(_ row: any SQLRow, id: String = "id") throws -> AccountInfo {
        AccountInfo(
            id: try row.decode(column: id, as: String.self), identifier: try row.decode(column: "identifier", as: String.self),
            createdAt: EpochMillis.date(try row.decode(column: "created_at", as: Int64.self)))
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
