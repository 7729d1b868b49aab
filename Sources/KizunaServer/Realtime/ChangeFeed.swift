import KizunaCore
import Logging
import NIOPosix
import PostgresNIO
import SQLKit
import ServiceLifecycle
import Synchronization

/// Reads the `changes` log as it grows and hands each change to observers (caches) and subscribers (streams).
///
/// The feed keeps its position in the log and reads "after my position" whenever it is woken: by a local commit
/// (``poke()``), by a PostgreSQL notification from any instance, or by a slow timer that covers a notification
/// lost while the listening connection was down. A missed wake-up therefore costs latency, never a change.
///
/// Who hears what is decided by a ``ChangeFeedStateMachine``; this class holds it behind a lock and does the I/O:
/// reading the log, resuming waiters, yielding to and finishing the subscribers' streams.
package final class ChangeFeed: Service, Sendable {
    /// A live subscription: changes after ``position``, in order, for the length of
    /// ``ChangeFeed/withSubscription(isolation:_:)``.
    package struct Subscription: Sendable {
        /// The log position when the subscription began; later changes arrive on ``changes``.
        package let position: Int64
        /// The changes after ``position``. It finishes when the subscription's scope ends, when the feed stops, or
        /// when the subscriber fell more than ``ChangeFeed/subscriberBuffer`` changes behind; the subscriber then
        /// resumes from the log.
        package let changes: AsyncStream<ChangeRecord>
    }

    /// How many undelivered changes a subscriber may hold before it is cut off to catch up from the log.
    package static let subscriberBuffer = 512

    /// Where a subscriber's changes go: a stream's continuation (``withSubscription(isolation:_:)``), or a sink that
    /// takes them itself (``withSink(accept:ended:_:)``).
    struct Receiver: Sendable {
        /// Takes a change; `false` when the receiver has no room for it, which cuts it off.
        let accept: @Sendable (ChangeRecord) -> Bool
        /// Told once that no more changes come: the subscriber was cut off, or the feed stopped.
        let finish: @Sendable () -> Void

        init(_ continuation: AsyncStream<ChangeRecord>.Continuation) {
            accept = { change in
                if case .dropped = continuation.yield(change) { return false }
                return true
            }
            finish = { continuation.finish() }
        }

        init(accept: @escaping @Sendable (ChangeRecord) -> Bool, finish: @escaping @Sendable () -> Void) {
            self.accept = accept
            self.finish = finish
        }
    }

    private typealias StateMachine = ChangeFeedStateMachine<Receiver, CheckedContinuation<Void, Never>>

    private struct State {
        var machine = StateMachine()
        var observers: [@Sendable (ChangeRecord) -> Void] = []
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

    /// Subscribes to changes from now on for the length of `body`, and unsubscribes when `body` returns or throws.
    ///
    /// Waits first until the feed has found the end of the log. The subscription must not escape `body`: its stream
    /// finishes when `body` ends. After the feed stopped, the stream is finished from the start.
    ///
    /// - Parameters:
    ///   - isolation: The actor `body` runs on; the caller's by default.
    ///   - body: Reads the subscription's changes.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    package func withSubscription<Result>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: (Subscription) async throws -> sending Result
    ) async throws -> sending Result {
        let (subscription, id) = await subscribe()
        defer {
            if let id { unsubscribe(id) }
        }
        return try await body(subscription)
    }

    /// Subscribes `accept` to the changes after the position `body` is given, for the length of `body`, with no stream
    /// and no task between the feed and the subscriber: `accept` is called with each change in order, on the feed's
    /// reader and under its lock, so it must be quick and must not wait (it hands the change to a buffer of the
    /// subscriber's own). Returning `false` cuts the subscriber off. `ended` is called once if the feed cuts it off or
    /// stops while `body` runs.
    ///
    /// Waits first until the feed has found the end of the log.
    package func withSink<Result>(
        isolation: isolated (any Actor)? = #isolation,
        accept: @escaping @Sendable (ChangeRecord) -> Bool,
        ended: @escaping @Sendable () -> Void,
        _ body: (_ position: Int64) async throws -> sending Result
    ) async throws -> sending Result {
        let (position, id) = await subscribe(Receiver(accept: accept, finish: ended))
        defer {
            if let id { unsubscribe(id) }
        }
        return try await body(position)
    }

    /// Adds a subscriber with a stream once the feed has started; `id` is `nil` when the feed had already stopped.
    private func subscribe() async -> (subscription: Subscription, id: Int?) {
        let (stream, continuation) = AsyncStream.makeStream(of: ChangeRecord.self, bufferingPolicy: .bufferingOldest(Self.subscriberBuffer))
        let (position, id) = await subscribe(Receiver(continuation))
        if let id {
            // A subscriber that stops reading (its task cancelled) leaves before its scope ends.
            continuation.onTermination = { [weak self] _ in self?.unsubscribe(id) }
        }
        return (Subscription(position: position, changes: stream), id)
    }

    /// Adds `receiver` once the feed has started: its position, and its id, which is `nil` when the feed had already
    /// stopped (the receiver is then finished at once).
    private func subscribe(_ receiver: Receiver) async -> (position: Int64, id: Int?) {
        await started()
        let action = state.withLock { $0.machine.subscribe(receiver) }
        switch action {
        case .subscribed(let id, let position):
            return (position, id)
        case .alreadyStopped(let subscriber, let position):
            subscriber.finish()
            return (position, nil)
        case .none, .resume, .yield, .cut, .finish:
            preconditionFailure("Subscribing answered \(action)")
        }
    }

    private func unsubscribe(_ id: Int) {
        perform(state.withLock { $0.machine.unsubscribe(id: id) })
    }

    private func started() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            perform(state.withLock { $0.machine.waitForStart(continuation) })
        }
    }

    /// Resumes waiters or finishes subscribers as the machine decided; always outside the lock, because finishing a
    /// stream runs its `onTermination`, which takes the lock.
    private func perform(_ action: StateMachine.Action) {
        switch action {
        case .none:
            break
        case .resume(let waiters):
            for waiter in waiters { waiter.resume() }
        case .finish(let subscribers):
            for subscriber in subscribers.values { subscriber.finish() }
        case .cut(let id, let subscriber):
            logger.info("A change subscriber fell behind; closing it so it resumes from the log", metadata: ["subscriber": "\(id)"])
            subscriber.finish()
        case .subscribed, .alreadyStopped, .yield:
            preconditionFailure("\(action) is performed where it is asked for")
        }
    }

    package func run() async throws {
        // However the feed ends (shutdown, a failed start-up, an unreadable log), nobody is left waiting on it:
        // waiters are released and subscribers finished.
        defer { perform(state.withLock { $0.machine.stop() }) }
        if let readiness {
            // The log exists once migrations are done. Shutdown may come first, and a failed start-up leaves the
            // feed idle (readiness reports why) until shutdown.
            let state = await cancelWhenGracefulShutdown { await readiness.settled() }
            guard state == .ready else {
                perform(self.state.withLock { $0.machine.stop() })  // nothing to wait for: release any waiter now
                try? await gracefulShutdown()
                return
            }
        }
        let start = try await database.withSession { try await ChangeLog.latestSeq(on: $0) }
        perform(state.withLock { $0.machine.start(position: start) })
        await withTaskGroup(of: Void.self) { group in
            if database.engine == .postgres, let configuration = database.postgresConfiguration {
                // Left behind at shutdown, cancelled: a reconnection may be in a handshake that ignores cancellation.
                group.addTask { _ = await untilGracefulShutdown { await self.listen(configuration) } }
            }
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: self.pollInterval)
                    self.wake.yield()
                }
            }
            group.addTask {
                // A read that failed (the store went away, or its pool still holds a dead connection) is tried again
                // soon, backing off to the poll interval: the wake-up it answered may have been the last for a while.
                var retry = Duration.milliseconds(250)
                for await _ in self.wakes.cancelOnGracefulShutdown() {
                    let outcome = await untilGracefulShutdown { () -> (any Error)? in
                        do {
                            try await self.catchUp()
                            return nil
                        } catch {
                            return error
                        }
                    }
                    guard let outcome else { break }  // shutting down
                    if let error = outcome {
                        self.logger.warning("Reading the change log failed; retrying", metadata: ["error": "\(error)", "retryIn": "\(retry)"])
                        let (wake, delay) = (self.wake, retry)
                        Task {
                            try? await Task.sleep(for: delay)
                            wake.yield()
                        }
                        retry = min(retry * 2, self.pollInterval)
                    } else {
                        retry = .milliseconds(250)
                    }
                }
            }
            await group.next()
            group.cancelAll()
        }
    }

    /// The oldest seq the log still keeps, or `nil` when it is empty: a subscriber resuming from before it has missed
    /// changes and must start over from a snapshot.
    package func oldestKept() async throws -> Int64? {
        try await database.withSession { try await ChangeLog.oldestSeq(on: $0) }
    }

    /// The changes in `(after, through]`, oldest first, read from the log in batches; only `kinds` and `entityId`
    /// when given. A subscriber resuming from `after` replays these with its subscription's position as `through`,
    /// and the subscription delivers the rest: nothing is missed or seen twice.
    package func replay(after start: Int64, through end: Int64, kinds: [String]? = nil, entityId: String? = nil) async throws -> [ChangeRecord] {
        var changes: [ChangeRecord] = []
        var after = start
        while after < end {
            let cursor = after
            let batch = try await database.withSession {
                try await ChangeLog.read(after: cursor, limit: 500, kinds: kinds, entityId: entityId, on: $0)
            }
            changes += batch.prefix { $0.seq <= end }
            guard let last = batch.last, batch.count == 500, last.seq < end else { break }
            after = last.seq
        }
        return changes
    }

    /// Reads and dispatches every change after the current position.
    private func catchUp() async throws {
        while true {
            let position = state.withLock { $0.machine.position }
            let batch = try await database.withSession { try await ChangeLog.read(after: position, limit: 500, on: $0) }
            for change in batch { dispatch(change) }
            if batch.count < 500 { return }
        }
    }

    private func dispatch(_ change: ChangeRecord) {
        // Observers (caches) first: a subscriber that hears of the change and asks at once must not get the
        // cached old version.
        state.withLock { $0.observers }.forEach { $0(change) }
        // Yielding under the lock orders deliveries with new subscriptions: a subscriber gets exactly the changes
        // after the position it was given. Yielding never takes the lock; finishing a cut subscriber does, so it comes after.
        let cuts: [StateMachine.Action] = state.withLock { state in
            guard case .yield(let subscribers) = state.machine.deliver(seq: change.seq) else { return [] }
            var cuts: [StateMachine.Action] = []
            for (id, subscriber) in subscribers {
                if !subscriber.accept(change) { cuts.append(state.machine.yieldDropped(id: id)) }
            }
            return cuts
        }
        for cut in cuts { perform(cut) }
    }

    /// A new LISTEN connection, given the pool's deadline on its whole opening (``PostgresConnection/opened(within:on:what:logger:_:)``):
    /// a handshake with a store that went away and came back once waited for ever, and the listener with it.
    private static func connect(_ configuration: PostgresConnection.Configuration, id: Int, logger: Logger) async throws -> PostgresConnection {
        let eventLoop = MultiThreadedEventLoopGroup.singleton.any()
        return try await PostgresConnection.opened(within: .seconds(10), on: eventLoop, what: "a LISTEN connection", logger: logger) {
            PostgresConnection.connect(on: eventLoop, configuration: configuration, id: id, logger: logger)
        }.get()
    }

    /// Holds a LISTEN connection for the life of the feed, reconnecting with back-off.
    private func listen(_ configuration: PostgresConnection.Configuration) async {
        var delay = Duration.milliseconds(250)
        var connectionID = 0
        while !Task.isCancelled {
            connectionID += 1
            do {
                let connection = try await Self.connect(configuration, id: connectionID, logger: logger)
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
