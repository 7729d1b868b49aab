import Foundation
import KizunaCore

/// Counts failed sign-ins per identifier and per client address in the store, so every instance sharing it
/// enforces the same locks (see ``SignInThrottlePolicy``). The counts are kept by a ``SignInThrottleRepository``;
/// the rules — which keys an attempt counts against, what a failure adds, when a key locks — are here.
///
/// The identifier's key is a hash of its normalised form, kept whether or not an account exists: an unknown
/// identifier locks exactly like a known one, so locks do not reveal which accounts exist, and the store does not
/// collect the identifiers people mistype.
struct SignInThrottle: Sendable {
    let repository: any SignInThrottleRepository
    let policy: SignInThrottlePolicy

    struct Key: Sendable, Hashable {
        let value: String
        let allowance: Int
    }

    /// The keys for a sign-in attempt.
    func keys(identifier: AccountIdentifier, address: String?) -> [Key] {
        var keys = [accountKey(identifier)]
        if let address { keys.append(Key(value: "address:" + address, allowance: policy.addressAllowance)) }
        return keys
    }

    /// The key of a device (an app install, a browser) holding a device token this account issued at a successful
    /// sign-in: it replaces the identifier's and the address's keys, so only guesses made with that token count
    /// against it. The token is the server's secret, so nobody else can pick the key.
    func trustedKey(_ token: SessionSecret) -> Key {
        Key(value: "trusted:" + token.hash, allowance: policy.accountAllowance)
    }

    /// The key of a signed-in session checking its own password (password change, account deletion).
    func sessionKey(_ sessionId: String) -> Key {
        Key(value: "session:" + sessionId, allowance: policy.accountAllowance)
    }

    /// The key of a client address signing in to the admin console with a token. Only addresses: the one admin token
    /// has no account to lock, and a lock on the console itself would let anyone lock the operators out.
    func consoleKey(_ address: String) -> Key {
        Key(value: "console:" + address, allowance: policy.addressAllowance)
    }

    /// The identifier's key: a hash of its normalised form.
    func accountKey(_ identifier: AccountIdentifier) -> Key {
        Key(value: "account:" + sha256Hex(identifier.normalized), allowance: policy.accountAllowance)
    }

    /// Throws `throttled` with the seconds left when any key is locked.
    func check(_ keys: [Key], now: Int64 = EpochMillis.now) async throws {
        let until = try await repository.locks(of: keys.map(\.value)).filter { $0 > now }.max() ?? 0
        if until > 0 { throw Self.locked(until: until, now: now) }
    }

    /// Counts one failure against every key, locking those past their allowance.
    func recordFailure(_ keys: [Key], now: Int64 = EpochMillis.now) async throws {
        let policy = policy
        try await repository.recordFailures(of: keys) { key, stored in
            Self.count(after: stored, of: key, now: now, policy: policy)
        }
        // Rows for identifiers nobody retries would otherwise stay; one failure in a hundred sweeps them.
        if Int.random(in: 0..<100) == 0 { try? await prune(now: now) }
    }

    /// A key's count after one more failure at `now`: failures older than the window are forgotten first, and past
    /// the key's allowance the key locks for as long as the policy says.
    static func count(after stored: SignInThrottleCount?, of key: Key, now: Int64, policy: SignInThrottlePolicy) -> SignInThrottleCount {
        var failures = stored?.failures ?? 0
        if let updated = stored?.updatedAt, now - updated > policy.window.milliseconds { failures = 0 }
        failures += 1
        let lockedUntil = policy.lock(afterFailures: failures, allowance: key.allowance).map { now + $0.milliseconds }
        return SignInThrottleCount(failures: failures, lockedUntil: lockedUntil, updatedAt: now)
    }

    /// Clears the identifier's count after a successful sign-in or a password reset. The address keeps its count
    /// (it decays with the window): signing in to one's own account must not reset a guessing run against others.
    func clear(identifier: AccountIdentifier) async throws {
        try await clear([accountKey(identifier)])
    }

    /// Clears the counts of `keys`.
    func clear(_ keys: [Key]) async throws {
        try await repository.clear(keys.map(\.value))
    }

    /// Drops rows that no longer hold anything: failures older than the window and any lock over.
    func prune(now: Int64 = EpochMillis.now) async throws {
        let horizon = now - max(policy.window, policy.longestLock).milliseconds
        try await repository.prune(updatedBefore: horizon)
    }

    static func locked(until: Int64, now: Int64) -> KizunaError {
        let seconds = max(1, Int((until - now + 999) / 1000))
        return KizunaError(
            .throttled, "Too many failed sign-ins; try again in \(seconds) s.", retryAfter: seconds)
    }
}
