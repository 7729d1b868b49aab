/// One key's count of failed sign-ins, as stored.
struct SignInThrottleCount: Sendable, Hashable {
    /// Failures counted within the policy's window.
    var failures: Int
    /// When the key's lock ends (epoch milliseconds), or `nil` while it is not locked.
    var lockedUntil: Int64?
    /// When the count last changed (epoch milliseconds); counts older than the window start again from zero.
    var updatedAt: Int64
}

/// Stores failed sign-in counts per key in the shared store, so every instance on it enforces the same locks.
///
/// Only storage lives here; what a failure adds and when a key locks are ``SignInThrottle``'s rules, handed in as a
/// function so that the read and the write of each count happen in one transaction.
protocol SignInThrottleRepository: Sendable {
    /// The lock ends stored for `keys`; keys without a row or without a lock are left out.
    func locks(of keys: [String]) async throws -> [Int64]

    /// Replaces the count of each key with `count(key, stored)` (`stored` is `nil` for a key without a row), in one
    /// transaction that holds each row while it is recounted: concurrent failures, on any instance, are all counted.
    func recordFailures(
        of keys: [SignInThrottle.Key], counting count: @escaping @Sendable (SignInThrottle.Key, SignInThrottleCount?) -> SignInThrottleCount
    ) async throws

    /// Forgets the counts of `keys`.
    func clear(_ keys: [String]) async throws

    /// Forgets every count last changed before `horizon` (epoch milliseconds).
    func prune(updatedBefore horizon: Int64) async throws
}
