import Crypto
import Foundation

/// A sticky percentage of installs: the same install always falls in the same bucket for a seed.
///
/// Each install gets a bucket in `0..<10_000` from SHA-256 of `seed` and the install id, so the resolution
/// is 1/10,000 (0.01 %). The rollout holds buckets `lower..<upper`; raising `upper` only adds installs.
public struct PercentRollout: Sendable, Hashable {
    /// The number of buckets: percentages resolve to 0.01.
    public static let buckets = 10_000

    /// Names the experiment; a different seed shuffles installs differently.
    public let seed: String
    /// The first bucket included.
    public let lower: Int
    /// The first bucket after the range.
    public let upper: Int

    /// Creates a rollout of buckets `lower..<upper`.
    public init(seed: String, lower: Int, upper: Int) {
        self.seed = seed
        self.lower = lower
        self.upper = upper
    }

    /// The bucket of `installId` for `seed`.
    public static func bucket(seed: String, installId: String) -> Int {
        // The bytes of "seed/installId", hashed where they are: a device request evaluates every rollout.
        var hasher = SHA256()
        func add(_ text: String) {
            var text = text
            text.withUTF8 { hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        }
        add(seed)
        add("/")
        add(installId)
        let digest = hasher.finalize()
        let prefix = digest.prefix(8).reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        return Int(prefix % UInt64(buckets))
    }

    /// Whether `installId` falls in the rollout.
    public func contains(_ installId: String) -> Bool {
        (lower..<upper).contains(Self.bucket(seed: seed, installId: installId))
    }
}
