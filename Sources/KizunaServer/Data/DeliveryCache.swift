import KizunaCore
import Synchronization

/// What an app's subscription deliveries share across connections, so that a change heard by ten thousand subscribers
/// costs about what it costs for one: the change decoded once, and each shared payload (the same document and
/// variables, selecting only the record's own fields: ``SubscriptionRequest/sharedKey``) executed and written as JSON
/// once. The ``SubscriptionHub`` matches a change for every connection at once; connections replaying or catching up
/// (their drainers) come to the same recent changes at about the same moment. The cache keeps the most recent only.
final class DeliveryCache: Sendable {
    /// A `next` payload and its JSON text, written once however many subscribers it is sent to.
    struct SharedPayload: Sendable {
        let json: JSONValue
        let bytes: [UInt8]

        init(_ json: JSONValue) {
            self.json = json
            bytes = json.jsonBytes
        }
    }

    private struct PayloadKey: Hashable {
        var seq: Int64
        var request: String
    }

    private struct State {
        var changes: [Int64: SubscriptionMatcher.Change?] = [:]
        var payloads: [PayloadKey: Task<SharedPayload, any Error>] = [:]
        var newest: Int64 = 0
    }

    /// How far behind the newest change an entry is still kept; a connection further behind (it may be up to its
    /// pending changes behind, 256 by default) computes its own.
    static let window: Int64 = 512

    private let state = Mutex(State())

    /// The change at `seq` decoded, by `decode` the first time it is asked for.
    func change(_ seq: Int64, decode: () -> SubscriptionMatcher.Change?) -> SubscriptionMatcher.Change? {
        if let cached = state.withLock({ $0.changes[seq] }) { return cached }
        let decoded = decode()
        state.withLock { state in
            state.changes[seq] = .some(decoded)
            Self.note(seq, in: &state)
        }
        return decoded
    }

    /// The payload `key` delivers for the change at `seq`, made by `make` once: those who ask meanwhile wait for it.
    /// A failure is not kept, so the next to ask (a connection resuming after it) makes it again.
    func payload(_ seq: Int64, _ key: String, make: @escaping @Sendable () async throws -> JSONValue) async throws -> SharedPayload {
        let id = PayloadKey(seq: seq, request: key)
        let task = state.withLock { state in
            if let running = state.payloads[id] { return running }
            let started = Task { SharedPayload(try await make()) }
            state.payloads[id] = started
            Self.note(seq, in: &state)
            return started
        }
        do {
            return try await task.value
        } catch {
            state.withLock { state in
                if state.payloads[id] == task { state.payloads[id] = nil }
            }
            throw error
        }
    }

    /// Forgets entries more than ``window`` behind the newest change once there are many.
    private static func note(_ seq: Int64, in state: inout State) {
        state.newest = max(state.newest, seq)
        guard state.changes.count + state.payloads.count > Int(window) * 4 else { return }
        let oldest = state.newest - window
        state.changes = state.changes.filter { $0.key >= oldest }
        state.payloads = state.payloads.filter { $0.key.seq >= oldest }
    }
}
