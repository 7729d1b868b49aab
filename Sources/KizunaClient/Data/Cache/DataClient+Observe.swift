import Foundation
import KizunaCore

extension DataClient {
    /// The answer to `query` from the offline cache now, and again after every change: the server's records (synced,
    /// then followed live) with the outbox's sends not yet confirmed applied on top, so a message shows the moment it
    /// is queued, marked ``LiveRecord/isPending``.
    ///
    /// ```swift
    /// struct Message: Codable, Sendable {
    ///     var id: String
    ///     var roomId: String
    ///     var text: String
    ///     var createdAt: String
    /// }
    ///
    /// func watch(room: String, app: KizunaApp) async throws {
    ///     let query = LiveQuery<Message>("Message", matching: ["roomId": .string(room)], sortedBy: \.createdAt)
    ///     for try await messages in app.data.observe(query) {
    ///         print(messages.map { ($0.isPending ? "… " : "") + $0.value.text })
    ///     }
    /// }
    /// ```
    ///
    /// The cache is the signed-in user's (each account on the device has its own copy, in the SDK's database), holds
    /// every field of the model that is not a relation, and persists across launches: offline, the stream answers from
    /// what the device has, and catches up when the server is back. While a query watches a model, the cache follows
    /// its subscriptions (one socket for the app, shared with ``subscribe(_:variables:operationName:field:as:)``).
    ///
    /// The stream throws ``DataError`` or `KizunaError` only for what a retry cannot fix: the user may not read the
    /// model, the schema has no such model, a record does not decode as `Record`. No network is not an error; see
    /// ``connectionStates()`` to tell the user.
    public func observe<Record>(_ query: LiveQuery<Record>) -> AsyncThrowingStream<[LiveRecord<Record>], any Error> {
        let (answers, continuation) = AsyncThrowingStream.makeStream(of: [LiveRecord<Record>].self, bufferingPolicy: .bufferingNewest(1))
        let observer = DataCache.Observer(
            model: query.model, matching: query.matching, client: self,
            refresh: { entries in
                do {
                    continuation.yield(try query.answer(from: entries))
                } catch {
                    continuation.finish(throwing: error)
                }
            },
            fail: { continuation.finish(throwing: $0) })
        let (cache, registration) = (cache, Locked(DataCache.Registration.pending))
        Task {
            do {
                try await cache.add(observer, registration: registration)
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in
            let previous = registration.withLock { state in
                defer { state = .ended }
                return state
            }
            // Not added yet: `add` finds it ended and does not keep it.
            if case .added(let key) = previous { Task { await cache.remove(key) } }
        }
        return answers
    }
}
