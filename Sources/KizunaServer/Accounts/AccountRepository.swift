import Foundation
import KizunaCore

/// Stores accounts, their sessions, trusted devices and one-time codes.
///
/// Each method is one whole operation, atomic where it writes more than one row (an account with its first session
/// and device token, a refresh exchange, a redeemed code with the session it opens). The rules — validation,
/// password hashing, throttling, what a session's lifetime is, which error to answer — stay in ``AccountService``;
/// a method tells what it found (`nil`, `false`, an outcome) and the service decides.
protocol AccountRepository: Sendable {
    // MARK: Sign-up and sign-in

    /// Stores a new account with its first session and a device token, in one transaction.
    /// - Returns: ``AccountCreation/identifierTaken`` when an account has the identifier, also when a concurrent
    ///   sign-up took it first.
    func create(_ account: NewAccount, session: NewSession, trust: SessionSecret) async throws -> AccountCreation
    /// The account with the (normalised) identifier, with what a sign-in checks.
    func credentials(identifier: AccountIdentifier) async throws -> StoredCredentials?
    /// Whether `token` was issued at a successful sign-in (or sign-up) of `userId`.
    func isTrusted(_ token: SessionSecret, by userId: String) async throws -> Bool
    /// Records a successful sign-in in one transaction: the sign-in time, the upgraded password hash when there is
    /// one, the new session, and the new device token when there is one.
    func recordSignIn(userId: String, rehashed: String?, session: NewSession, trust: SessionSecret?) async throws

    // MARK: Sessions

    /// The session whose access token hashes to `accessHash`, with its account, expired or not.
    func session(accessHash: String) async throws -> StoredSession?
    /// Where session `id` stands: when its access token and the session itself expire, and whether its account is
    /// disabled; `nil` when it no longer exists.
    func standing(ofSession id: String) async throws -> SessionStanding?
    /// Sets a session's "last used" time.
    func touchSession(id: String, at now: Int64) async throws
    /// Deletes one session of `userId`. - Returns: `false` when the account has no such session.
    func deleteSession(id: String, of userId: String) async throws -> Bool
    /// Deletes every session of `userId`, except `keeping`.
    func deleteSessions(of userId: String, keeping: String?) async throws
    /// The sessions of `userId` still alive at `now`, newest first; none is marked current.
    func sessions(of userId: String, activeAt now: Int64) async throws -> [SessionInfo]
    /// Exchanges the refresh token `rotation.presented` for a new pair, in one transaction that holds the session row.
    ///
    /// A token that is not a session's current one but was exchanged before is shown to `answerRetry`: its answer
    /// (the pair sealed at that exchange) is sent again, once; without one the session is deleted.
    func exchangeRefresh(
        _ rotation: RefreshRotation, answerRetry: @escaping @Sendable (ReusedRefresh) -> IssuedSession?
    ) async throws -> RefreshOutcome

    // MARK: Passwords and one-time codes

    /// The password hash of `userId`.
    func passwordHash(userId: String) async throws -> String?
    /// Sets the password hash of `userId` and deletes its other sessions, in one transaction; with `consumingCode`
    /// the reset code of that hash is deleted in it too, so a code redeemed twice at once sets the password once.
    /// - Returns: `false`, with nothing changed, when `consumingCode` no longer exists.
    func setPassword(userId: String, hash: String, at now: Int64, keepingSession: String?, consumingCode: String?) async throws -> Bool
    /// The password-reset code whose hash is `hash`, expired or not.
    func resetCode(hash: String) async throws -> StoredResetCode?
    /// Stores a password-reset code for `userId`, deleting the account's earlier ones.
    func replaceResetCode(hash: String, userId: String, createdAt: Int64, expiresAt: Int64) async throws
    /// Stores a handoff code, which dies with the session `sessionId`.
    func createHandoff(hash: String, userId: String, sessionId: String, next: String, createdAt: Int64, expiresAt: Int64) async throws
    /// Redeems a handoff code in one transaction: the code is deleted whatever follows, and `session` is stored for its
    /// account when the code has not expired, its app session is alive and the account is enabled.
    /// - Returns: `nil` when no session was opened.
    func redeemHandoff(hash: String, at now: Int64, session: NewSession) async throws -> HandoffRedemption?
    /// Deletes an account with its sessions, devices, device tokens and codes.
    func delete(userId: String) async throws

    // MARK: Operators

    /// The account with `id`.
    func account(id: String) async throws -> AccountInfo?
    /// The operator's view of the account with `id`, its live sessions counted at `now`.
    func user(id: String, now: Int64) async throws -> UserRecord?
    /// The operator's view of the account with the (normalised) identifier, its live sessions counted at `now`.
    func user(identifier: String, now: Int64) async throws -> UserRecord?
    /// A page of at most `limit` accounts in identifier order, after `after`, only identifiers containing `search`
    /// (taken literally) when given; `next` is set when more follow.
    func users(after: String?, limit: Int, containing search: String?, now: Int64) async throws -> UserList
    /// Disables (signing out every session, in the same transaction) or enables an account.
    func setDisabled(_ disabled: Bool, userId: String, at now: Int64) async throws
}

/// An account about to be stored.
struct NewAccount: Sendable {
    let account: AccountInfo
    let passwordHash: String
    /// The creation time as stored (epoch milliseconds); also its password-change and first sign-in time.
    let createdAt: Int64
}

/// What ``AccountRepository/create(_:session:trust:)`` did.
enum AccountCreation: Sendable, Hashable {
    case created
    case identifierTaken
}

/// A session about to be stored: only the hashes of its secrets are kept.
struct NewSession: Sendable {
    let issued: IssuedSession
    let kind: SessionInfo.Kind
    /// The install it signed in from; recorded as one of the account's devices.
    let device: DeviceRegistration?
    let createdAt: Int64
}

/// An account with what a sign-in checks.
struct StoredCredentials: Sendable {
    let account: AccountInfo
    let passwordHash: String
    let disabledAt: Int64?
}

/// A session with its account, as an access token finds it.
struct StoredSession: Sendable {
    let id: String
    let kind: SessionInfo.Kind
    let expiresAt: Int64
    let lastUsedAt: Int64
    let account: AccountInfo
    let disabledAt: Int64?
}

/// Where a stored session stands, for a connection that outlives its access token (``AccountService/standing(of:)``).
struct SessionStanding: Sendable, Hashable {
    /// When the access token now current expires (a refresh moves it on).
    let accessExpiresAt: Int64
    /// When the session ends: its refresh token's expiry, or for a web session its cookie's.
    let endsAt: Int64
    let disabled: Bool
}

/// A stored password-reset code.
struct StoredResetCode: Sendable, Hashable {
    let userId: String
    let expiresAt: Int64
}

/// A redeemed handoff code.
struct HandoffRedemption: Sendable, Hashable {
    /// The path the code asked to land on, if any.
    let next: String?
}

/// A refresh exchange: the token presented and the pair that replaces it.
struct RefreshRotation: Sendable {
    let presented: SessionSecret
    let access: SessionSecret
    let refresh: SessionSecret
    let expiresAt: Int64
    let refreshExpiresAt: Int64
    let now: Int64
    /// Retired tokens retired before this are no longer worth remembering (they would have expired anyway).
    let forgetRetiredBefore: Int64
}

/// A refresh token presented after it was exchanged, and what its session knows of that exchange.
struct ReusedRefresh: Sendable {
    let sessionId: String
    /// Whether it is the token the session exchanged last.
    let isLast: Bool
    /// When the session last exchanged a token (epoch milliseconds; 0 when never recorded).
    let rotatedAt: Int64
    /// The install the session belongs to.
    let installId: String?
    let disabled: Bool
    /// The answer of the last exchange, sealed under the token it exchanged (see ``RefreshGrace``); `nil` once sent
    /// again.
    let sealedAnswer: String?
}

/// What ``AccountRepository/exchangeRefresh(_:answerRetry:)`` found and did.
enum RefreshOutcome: Sendable {
    /// The token was current: the new pair replaced it.
    case rotated(AccountInfo, IssuedSession)
    /// The token was current but has expired; nothing changed.
    case expired
    /// The token was current but the account is disabled; nothing changed.
    case disabled
    /// The token was exchanged before and `answerRetry` answered: the same pair is sent again, never again after.
    case retried(AccountInfo, IssuedSession)
    /// The token was exchanged before and not answered: its session was deleted.
    case signedOut(ReusedRefresh)
    /// No session knows the token.
    case unknown
}
