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
            account: AccountInfo(
                id: try row.decode(column: "user_id", as: String.self), identifier: try row.decode(column: "identifier", as: String.self),
                createdAt: EpochMillis.date(try row.decode(column: "created_at", as: Int64.self))))
    }

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
            return (try Self.accountInfo(row), issued)
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
            return (try accountInfo(row), issued)
        }
        try await db.delete(from: "sessions").where("id", .equal, SQLBind(id)).run()
        logger.warning(
            "A refresh token was used after it had been exchanged; its session is signed out",
            metadata: ["session": "\(id)", "last": "\(isLast)", "sameInstall": "\(sessionInstall != nil && sessionInstall == installId)"])
        return nil
    }

    private static func accountInfo(_ row: any SQLRow) throws -> AccountInfo {
        AccountInfo(
            id: try row.decode(column: "user_id", as: String.self), identifier: try row.decode(column: "identifier", as: String.self),
            createdAt: EpochMillis.date(try row.decode(column: "created_at", as: Int64.self)))
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

    // MARK: Passwords

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

    // MARK: Accounts

    /// The account with `id`, or `nil`.
    func account(id: String) async throws -> AccountInfo? {
        try await database.select().columns("id", "identifier", "created_at").from("users").where("id", .equal, SQLBind(id)).first().map(Self.info)
    }

    /// The account an operator names by id or by identifier, or `nil`.
    func findUser(_ reference: String) async throws -> UserRecord? {
        let query = database.select().columns(Self.userColumns).from("users")
        if reference.hasPrefix("usr_") {
            query.where("id", .equal, SQLBind(reference))
        } else {
            query.where("identifier", .equal, SQLBind(AccountIdentifier.normalize(reference)))
        }
        guard let row = try await query.first() else { return nil }
        return try await records([row]).first
    }

    /// A page of accounts in identifier order, after `after`, optionally only identifiers containing `search`.
    func listUsers(after: String?, limit: Int, search: String?) async throws -> UserList {
        let query = database.select().columns(Self.userColumns).from("users").orderBy("identifier").limit(limit + 1)
        if let after { query.where("identifier", .greaterThan, SQLBind(after)) }
        if let search, !search.isEmpty {
            let escaped = AccountIdentifier.normalize(search).replacingOccurrences(of: "\\", with: "\\\\")
                .replacingOccurrences(of: "%", with: "\\%").replacingOccurrences(of: "_", with: "\\_")
            query.where(SQLQueryString("identifier LIKE \(bind: "%\(escaped)%") ESCAPE '\\'"))
        }
        let rows = try await query.all()
        let users = try await records(Array(rows.prefix(limit)))
        return UserList(users: users, next: rows.count > limit ? users.last?.identifier : nil)
    }

    /// Disables or enables an account; disabling signs out every session at once.
    func setDisabled(_ disabled: Bool, userId: String) async throws {
        let now = EpochMillis.now
        try await database.transaction { db in
            try await db.update("users").set("disabled_at", to: SQLBind(disabled ? now : nil)).set("updated_at", to: SQLBind(now))
                .where("id", .equal, SQLBind(userId)).run()
            if disabled { try await db.delete(from: "sessions").where("user_id", .equal, SQLBind(userId)).run() }
        }
        logger.notice(disabled ? "Account disabled" : "Account enabled", metadata: ["user": "\(userId)"])
    }

    // MARK: Internals

    private struct UserRow {
        let account: AccountInfo
        let passwordHash: String
        let disabledAt: Int64?
    }

    private static let userColumns = [
        "id", "identifier", "disabled_at", "created_at", "updated_at", "password_changed_at", "last_sign_in_at",
    ]

    /// The records of a page of `users` rows: two queries for the whole page (session counts, devices), not two per
    /// account.
    private func records(_ rows: [any SQLRow]) async throws -> [UserRecord] {
        let ids = try rows.map { try $0.decode(column: "id", as: String.self) }
        guard !ids.isEmpty else { return [] }
        let now = EpochMillis.now
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

    /// Checks a signed-in account's password, with the same throttling as sign-in.
    ///
    /// The failures are counted against the session alone: the session already proves a device that signed in, so
    /// neither a busy shared address nor someone guessing at the identifier can stop its owner changing the password,
    /// while a stolen session still gets only a few guesses.
    private func checkPassword(_ password: String, field: String, of session: AuthenticatedSession) async throws {
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

    private func setPassword(
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

    private static func createSession(
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

    private static func userRow(identifier: AccountIdentifier, _ db: any SQLDatabase) async throws -> UserRow? {
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
    private static func checkAppExists(_ device: DeviceRegistration?, _ db: any SQLDatabase) async throws {
        guard let device else { return }
        guard try await db.select().column("id").from("apps").where("id", .equal, SQLBind(device.appId)).first() != nil else {
            throw KizunaError(.validationFailed, "There is no app with id '\(device.appId)'; register it first.", field: "device.appId")
        }
    }

    private static func info(_ row: any SQLRow) throws -> AccountInfo {
        AccountInfo(
            id: try row.decode(column: "id", as: String.self), identifier: try row.decode(column: "identifier", as: String.self),
            createdAt: EpochMillis.date(try row.decode(column: "created_at", as: Int64.self)))
    }

    private static func checkDevice(_ device: DeviceRegistration?) throws(KizunaError) {
        guard let device else { return }
        if device.appId.isEmpty || device.appId.count > 64 || device.installId.isEmpty || device.installId.count > 128
            || (device.name?.count ?? 0) > 100
        {
            throw KizunaError(
                .validationFailed, "The device needs an appId (≤ 64), an installId (≤ 128) and at most a 100-character name.", field: "device")
        }
    }

    private static var accountDisabled: KizunaError {
        KizunaError(.accountDisabled, "This account has been disabled. Contact the app's support.")
    }

    static var sessionExpired: KizunaError {
        KizunaError(.sessionExpired, "The session has expired or was signed out; sign in again.")
    }

    private static var identifierTaken: KizunaError {
        KizunaError(.conflict, "An account with this identifier already exists (identifiers ignore case and character width).", field: "identifier")
    }

    private static var badResetToken: KizunaError {
        KizunaError(.sessionExpired, "This password-reset link has expired or was already used; ask for a new one.", field: "token")
    }

    static var badHandoff: KizunaError {
        KizunaError(.sessionExpired, "This sign-in link has expired or was already used; open it again from the app.", field: "code")
    }
}
