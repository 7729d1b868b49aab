import Synchronization

/// Values read from the store per key (an app), kept until the change feed reports a change of one of `kinds` for
/// that key, on this instance or any other.
///
/// A load that a change overtook is returned but not kept: each key has a generation that every invalidation bumps,
/// and a load is stored only if the generation it started under is still current. So the cache never keeps a value
/// older than a change it has been told of.
final class FeedCache<Value: Sendable>: Sendable {
    private struct Slot {
        var generation: UInt64 = 0
        var value: Value?
    }

    private let slots = Mutex<[String: Slot]>([:])

    /// A cache that forgets a key's value when the feed delivers a change of `kinds` for that key.
    /// - Parameter key: The key a change is for: its entity (an app) by default.
    init(feed: ChangeFeed, kinds: Set<String>, key: @escaping @Sendable (ChangeRecord) -> String = \.entityId) {
        feed.observe { [weak self] change in
            if kinds.contains(change.kind) { self?.invalidate(key(change)) }
        }
    }

    /// Forgets the value of `key`; the writer calls it at once after its own commit (the feed follows later).
    func invalidate(_ key: String) {
        slots.withLock { slots in
            slots[key] = Slot(generation: (slots[key]?.generation ?? 0) &+ 1)
        }
    }

    /// The cached value of `key` when there is one and `isFresh` accepts it; nil otherwise (nothing is loaded).
    func cached(_ key: String, isFresh: (Value) -> Bool = { _ in true }) -> Value? {
        guard let cached = slots.withLock({ $0[key]?.value }), isFresh(cached) else { return nil }
        return cached
    }

    /// The cached value of `key` when `isFresh` accepts it, otherwise what `load` reads (kept if no change came
    /// meanwhile). A load that throws keeps nothing.
    nonisolated(nonsending) func value(
        _ key: String, isFresh: (Value) -> Bool = { _ in true }, load: nonisolated(nonsending) () async throws -> Value
    ) async throws -> Value {
        let slot = slots.withLock { $0[key] ?? Slot() }
        if let cached = slot.value, isFresh(cached) { return cached }
        let loaded = try await load()
        slots.withLock { slots in
            if (slots[key]?.generation ?? 0) == slot.generation { slots[key, default: Slot()].value = loaded }
        }
        return loaded
    }
}
