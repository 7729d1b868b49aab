import Foundation
import Logging
import PostgresNIO
import SQLKit
import ServiceLifecycle
import Synchronization

/// Reads the `changes` log as it grows and hands each change to observers (caches) and subscribers (streams).
///
/// The feed keeps its position in the log and reads "after my position" whenever it is woken: by a local commit
/// (``poke()``), by a PostgreSQL notification from any instance, or by a slow timer that covers a notification
/// lost while the listening connection was down. A missed wake-up therefore costs latency, never a change.
package final class ChangeFeed: Service, Sendable {
    /// A live subscription: changes after ``position``, in order.
    package struct Subscription: Sendable {
        /// The log position when the subscription began; later changes arrive on ``changes``.
        package let position: Int64
        /// The changes after ``position``. It finishes when the feed stops, or when the subscriber fell more than
        /// ``ChangeFeed/subscriberBuffer`` changes behind; the subscriber then resumes from the log.
        package let changes: AsyncStream<ChangeRecord>
        let id: UUID
    }

    /// How many undelivered changes a subscriber may hold before it is cut off to catch up from the log.
    package static let subscriberBuffer = 512

    private struct State {
        var position: Int64 = 0
        var started = false
        var subscribers: [UUID: AsyncStream<ChangeRecord>.Continuation] = [:]
        var observers: [@Sendable (ChangeRecord) -> Void] = []
        var startWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let database: KizunaDatabase
    private let readiness: Readiness?
    private let logger: Logger
    private let pollInterval: Duration
    private let state = Mutex(State())
    private let wakes: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation

    /// Creates a feed over `database` that starts once `readiness` says the store is migrated; `pollInterval`
    /// bounds the delay after a lost notification.
    package init(database: KizunaDatabase, readiness: Readiness? = nil, logger: Logger, pollInterval: Duration = .seconds(5)) {
        self.database = database
        self.readiness = readiness
        self.logger = logger
        self.pollInterval = pollInterval
        (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Calls `observer` with every change, before subscribers see it. Observers must be quick and not block.
    package func observe(_ observer: @escaping @Sendable (ChangeRecord) -> Void) {
        state.withLock { $0.observers.append(observer) }
    }

    /// Asks the feed to read the log now; the writer calls it after committing a change.
    package func poke() {
        wake.yield()
    }

    /// Subscribes to changes from now on; waits until the feed has found the end of the log.
    package func subscribe() async -> Subscription {
        await started()
        let (stream, continuation) = AsyncStream.makeStream(of: ChangeRecord.self, bufferingPolicy: .bufferingOldest(Self.subscriberBuffer))
        let id = UUID()
        let position = state.withLock { state in
            state.subscribers[id] = continuation
            return state.position
        }
        continuation.onTermination = { [weak self] _ in self?.unsubscribe(id) }
        return Subscription(position: position, changes: stream, id: id)
    }

    /// Ends `subscription`, for a subscriber that stops before iterating its stream to the end.
    package func unsubscribe(_ subscription: Subscription) {
        unsubscribe(subscription.id)?.finish()
    }

    @discardableResult
    private func unsubscribe(_ id: UUID) -> AsyncStream<ChangeRecord>.Continuation? {
        state.withLock { $0.subscribers.removeValue(forKey: id) }
    }

    private func started() async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state in
                if state.started { return true }
                state.startWaiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    package func run() async throws {
        if let readiness {
            // The log exists once migrations are done. Shutdown may come first, and a failed start-up leaves the
            // feed idle (readiness reports why) until shutdown.
            let state = await cancelWhenGracefulShutdown { await readiness.settled() }
            guard state == .ready else {
                try? await gracefulShutdown()
                return
            }
        }
        let start = try await database.withSession { try await ChangeLog.latestSeq(on: $0) }
        let waiters = state.withLock { state in
            state.position = start
            state.started = true
            defer { state.startWaiters = [] }
            return state.startWaiters
        }
        waiters.forEach { $0.resume() }
        defer {
            let subscribers = state.withLock { state in
                defer { state.subscribers = [:] }
                return Array(state.subscribers.values)
            }
            subscribers.forEach { $0.finish() }
        }
        await withTaskGroup(of: Void.self) { group in
            if database.engine == .postgres, let configuration = database.postgresConfiguration {
                group.addTask { await self.listen(configuration) }
            }
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: self.pollInterval)
                    self.wake.yield()
                }
            }
            group.addTask {
                for await _ in self.wakes.cancelOnGracefulShutdown() {
                    do {
                        try await self.catchUp()
                    } catch {
                        self.logger.warning("Reading the change log failed; retrying on the next wake-up", metadata: ["error": "\(error)"])
                    }
                }
            }
            await group.next()
            group.cancelAll()
        }
    }

    /// Reads and dispatches every change after the current position.
    private func catchUp() async throws {
        while true {
            let position = state.withLock { $0.position }
            let batch = try await database.withSession { try await ChangeLog.read(after: position, limit: 500, on: $0) }
            for change in batch { dispatch(change) }
            if batch.count < 500 { return }
        }
    }

    private func dispatch(_ change: ChangeRecord) {
        // Observers (caches) first: a subscriber that hears of the change and asks at once must not get the
        // cached old version.
        state.withLock { $0.observers }.forEach { $0(change) }
        let lagging = state.withLock { state in
            state.position = change.seq
            return state.subscribers.compactMap { id, subscriber in
                if case .dropped = subscriber.yield(change) { id } else { nil }
            }
        }
        for id in lagging {
            logger.info("A change subscriber fell behind; closing it so it resumes from the log", metadata: ["subscriber": "\(id)"])
            state.withLock { $0.subscribers.removeValue(forKey: id) }?.finish()
        }
    }

    /// Holds a LISTEN connection for the life of the feed, reconnecting with back-off.
    private func listen(_ configuration: PostgresConnection.Configuration) async {
        var delay = Duration.milliseconds(250)
        var connectionID = 0
        while !Task.isCancelled {
            connectionID += 1
            do {
                let connection = try await PostgresConnection.connect(
                    configuration: configuration,
                    id: connectionID,
                    logger: logger
                )
                do {
                    try await connection.listen(on: ChangeLog.channel) { notifications in
                        delay = .milliseconds(250)
                        wake.yield()  // changes committed while no connection listened
                        for try await _ in notifications { wake.yield() }
                    }
                } catch {
                    try? await connection.close()
                    throw error
                }
                try? await connection.close()
            } catch {
                if Task.isCancelled { return }
                logger.warning("The change listener lost PostgreSQL; reconnecting", metadata: ["error": "\(error)", "retryIn": "\(delay)"])
            }
            try? await Task.sleep(for: delay)
            delay = min(delay * 2, .seconds(10))
        }
    }
}
