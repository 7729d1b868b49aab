import Crypto
import Foundation
import KizunaCore
import Logging
import NIOCore
import Synchronization

/// The apple-app-site-association file as served: built once and kept as bytes with its ETag, rebuilt only after
/// the apps registry or an app's associated-domain settings change (on this instance or, through the change feed,
/// any other). An app update makes every device fetch the file at once; none of those requests touches the store.
package final class AssociationFile: Sendable {
    /// The bytes and their ETag.
    struct Served: Sendable {
        let bytes: ByteBuffer
        let etag: String
    }

    /// The change kind written when an app's associated-domain settings change.
    static let settingsChangeKind = "associated-domains"
    /// The one key the cache keeps the file under.
    private static let key = "file"

    private let cache: FeedCache<Served>
    private let store: Mutex<AssociatedDomainStore?> = Mutex(nil)
    /// The last file served, kept for when the file cannot be built: iOS reads a 4xx as "not associated" and would
    /// drop AutoFill and universal links for every app, so a server-side problem must never reach it as one.
    private let lastGood = Mutex<Served?>(nil)
    private let buildCount = Atomic<Int>(0)

    /// A file rebuilt after changes to the registry (`app`) or to settings that `feed` reports.
    init(feed: ChangeFeed) {
        cache = FeedCache(feed: feed, kinds: ["app", Self.settingsChangeKind], key: { _ in Self.key })
    }

    /// Gives the file its source; the store is built after the apps registry, whose commits call ``invalidate()``.
    func use(_ store: AssociatedDomainStore) {
        self.store.withLock { $0 = store }
    }

    /// How many times the file has been built: once per change, not per request.
    package var builds: Int { buildCount.load(ordering: .relaxed) }

    /// Forgets the kept file; a writer calls it at once after its own commit (the feed follows, for other instances).
    func invalidate() {
        cache.invalidate(Self.key)
    }

    /// The file to serve: the kept one, else built now; when it cannot be built, the last good one.
    /// - Throws: `unavailable` (503, retried by Apple) only when no file was ever built.
    func served(logger: Logger) async throws -> Served {
        do {
            let served = try await cache.value(Self.key) {
                guard let store = store.withLock({ $0 }) else { throw KizunaError(.unavailable, "The server is starting.") }
                buildCount.add(1, ordering: .relaxed)
                let bytes = try await store.file().encoded()
                let digest = SHA256.hash(data: bytes).prefix(16).map { String(format: "%02x", $0) }.joined()
                return Served(bytes: ByteBuffer(bytes: bytes), etag: "\"\(digest)\"")
            }
            lastGood.withLock { $0 = served }
            return served
        } catch {
            // Too large, or the store out of reach: the last good file is still the right answer.
            guard let kept = lastGood.withLock({ $0 }) else {
                logger.error("apple-app-site-association cannot be built", metadata: ["error": "\(error)"])
                throw KizunaError(.unavailable, "The apple-app-site-association file cannot be served right now.", retryAfter: 60)
            }
            logger.error("apple-app-site-association cannot be built; serving the last good file", metadata: ["error": "\(error)"])
            return kept
        }
    }
}
