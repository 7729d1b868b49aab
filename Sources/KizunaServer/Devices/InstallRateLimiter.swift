import Foundation
import KizunaCore
import Synchronization

/// How often one install may call a device endpoint: a token bucket of `burst` requests refilled at
/// `perMinute` a minute.
public struct DeviceRateLimit: Sendable, Hashable {
    /// Requests per minute in the long run.
    public var perMinute: Double
    /// Requests allowed back to back.
    public var burst: Double

    /// Creates a limit.
    public init(perMinute: Double, burst: Double) {
        self.perMinute = perMinute
        self.burst = burst
    }

    /// Generous: 60 a minute with bursts of 30. An app that fetches at launch, on becoming active and on every
    /// realtime event stays far below it; a loop in a buggy build does not.
    public static let `default` = DeviceRateLimit(perMinute: 60, burst: 30)
}

/// Per-install throttling for device endpoints, in this process's memory.
///
/// Each instance keeps its own buckets; behind a load balancer an install may get up to N times the limit. That
/// is the point of the limit — stopping a runaway client cheaply — and needs no shared state.
final class InstallRateLimiter: Sendable {
    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    private let limit: DeviceRateLimit
    private let maximumKeys: Int
    /// An install of an app (`nil`: requests that name no install share one bucket per app).
    private struct Key: Hashable {
        let app: String
        let install: String?
    }

    private let buckets = Mutex<[Key: Bucket]>([:])

    init(limit: DeviceRateLimit, maximumKeys: Int = 100_000) {
        self.limit = limit
        self.maximumKeys = maximumKeys
    }

    /// Takes one request for `install` of `app`, or throws `throttled` with the seconds until the next one.
    func take(app: String, install: String?, now: ContinuousClock.Instant = .now) throws(KizunaError) {
        let key = Key(app: app, install: install)
        let perSecond = limit.perMinute / 60
        let wait: Double? = buckets.withLock { buckets in
            var bucket = buckets[key] ?? Bucket(tokens: limit.burst, updated: now)
            let elapsed = (now - bucket.updated) / .seconds(1)
            bucket.tokens = min(limit.burst, bucket.tokens + elapsed * perSecond)
            bucket.updated = now
            guard bucket.tokens >= 1 else {
                buckets[key] = bucket
                return (1 - bucket.tokens) / perSecond
            }
            bucket.tokens -= 1
            if buckets.count >= maximumKeys, buckets[key] == nil { Self.evictFull(&buckets, now: now, perSecond: perSecond, burst: limit.burst) }
            buckets[key] = bucket
            return nil
        }
        if let wait {
            let seconds = max(1, Int(wait.rounded(.up)))
            throw KizunaError(
                .throttled,
                "This install called too often; try again in \(seconds) s. The limit is \(Int(limit.perMinute)) a minute.",
                retryAfter: seconds
            )
        }
    }

    /// Drops buckets that have refilled completely (they hold no state worth keeping); failing that, half of all.
    private static func evictFull(_ buckets: inout [Key: Bucket], now: ContinuousClock.Instant, perSecond: Double, burst: Double) {
        let before = buckets.count
        buckets = buckets.filter { _, bucket in
            let elapsed = (now - bucket.updated) / .seconds(1)
            return bucket.tokens + elapsed * perSecond < burst
        }
        if buckets.count > before / 2 {
            buckets = Dictionary(uniqueKeysWithValues: buckets.prefix(before / 2).map { ($0.key, $0.value) })
        }
    }
}
