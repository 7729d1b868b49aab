import KizunaCore
import Logging
import ServiceLifecycle
import Synchronization

/// Hands each data change to every graphql-transport-ws connection of its app, from one task for the whole server.
///
/// The hub is the change feed's one subscriber for all connections (``ChangeFeed/withSink(accept:ended:_:)``). For each
/// data change it asks every connection of the change's app which of its subscriptions are live
/// (``GraphQLWSConnection/collect(_:)``), matches them all at once (``SubscriptionMatcher``: the change decoded once,
/// each shared payload executed once, the `via` records read once), and writes the `next` frames with one closure per
/// event loop (``GraphQLWSFrameBatch``). An idle connection therefore has no task waiting for changes, and a change
/// heard by ten thousand connections wakes one task, not ten thousand.
///
/// A connection with work of its own in progress — a subscription being replayed from its `since`, or changes queued
/// behind one — is handed the change to its queue instead, and works through it in order (`GraphQLWSConnection+Feed`).
/// Ends of sessions (``SessionEvents``) go to the queues of the connections of that user.
///
/// The hub keeps the position of the last change it handed out. A connection registers at that position, atomically
/// with the fan-out, so each change is either handed to it or before its position: a subscription replayed up to the
/// position then hears the rest live, with no gap and nothing twice.
final class SubscriptionHub: Service, Sendable {
    private struct Waiter {
        let connection: GraphQLWSConnection
        let app: String
        let continuation: CheckedContinuation<Int64?, Never>
    }

    private struct State {
        var connections: [String: [ObjectIdentifier: GraphQLWSConnection]] = [:]
        /// The seq of the last change handed out; `nil` until the feed subscription is open.
        var position: Int64?
        /// Connections that asked to register before the feed subscription was open.
        var waiters: [Waiter] = []
        var stopped = false
    }

    private let feed: ChangeFeed
    /// How many changes the hub may have waiting before the feed cuts it off (every connection then resumes by seq):
    /// ``GraphQLWSSettings/hubBuffer``.
    private let buffer: Int
    private let logger: Logger
    private let state = Mutex(State())

    init(feed: ChangeFeed, buffer: Int = GraphQLWSSettings().hubBuffer, logger: Logger) {
        self.feed = feed
        self.buffer = buffer
        self.logger = logger
    }

    /// Adds a connection of `app` if the hub hears the feed now.
    /// - Returns: The position it starts from, or `nil` when the hub is not running (``register(_:app:)`` waits).
    func registerNow(_ connection: GraphQLWSConnection, app: String) -> Int64? {
        state.withLock { state in
            guard !state.stopped, let position = state.position else { return nil }
            state.connections[app, default: [:]][ObjectIdentifier(connection)] = connection
            return position
        }
    }

    /// Adds a connection of `app` once the hub hears the feed (at start-up, or while it subscribes again).
    /// - Returns: The position it starts from, or `nil` when the hub stopped or the waiting task was cancelled (the
    ///   connection's on a shutdown: the hub stops only after the server has closed its connections).
    func register(_ connection: GraphQLWSConnection, app: String) async -> Int64? {
        if let position = registerNow(connection, app: app) { return position }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Int64?, Never>) in
                let answer: Int64?? = state.withLock { state in
                    // Checked under the lock, so a cancellation either finds the waiter below or is seen here.
                    if state.stopped || Task.isCancelled { return .some(nil) }
                    guard let position = state.position else {
                        state.waiters.append(Waiter(connection: connection, app: app, continuation: continuation))
                        return nil
                    }
                    state.connections[app, default: [:]][ObjectIdentifier(connection)] = connection
                    return .some(position)
                }
                if let answer { continuation.resume(returning: answer) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let index = state.waiters.firstIndex(where: { $0.connection === connection }) else { return nil }
                return state.waiters.remove(at: index)
            }
            waiter?.continuation.resume(returning: nil)
        }
    }

    /// Removes a connection that closed.
    func unregister(_ connection: GraphQLWSConnection, app: String) {
        state.withLock { state in
            state.connections[app]?[ObjectIdentifier(connection)] = nil
            if state.connections[app]?.isEmpty == true { state.connections[app] = nil }
        }
    }

    func run() async throws {
        defer { stop() }
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            let (changes, queue) = AsyncStream.makeStream(of: ChangeRecord.self, bufferingPolicy: .bufferingOldest(buffer))
            let accept: @Sendable (ChangeRecord) -> Bool = { change in
                guard change.kind == DataRuntime.changeKind || change.kind == SessionEvents.kind else { return true }
                if case .dropped = queue.yield(change) { return false }
                return true
            }
            try await feed.withSink(accept: accept, ended: { queue.finish() }) { position in
                open(at: position)
                for await change in changes.cancelOnGracefulShutdown() {
                    await fanOut(change)
                }
            }
            // Shutting down: each connection closes itself (1001).
            if Task.isShuttingDownGracefully || Task.isCancelled { return }
            // The feed cut the hub off (it fell behind) or stopped: every connection resumes from its last seq, and
            // the hub subscribes again after a pause (a stopped feed answers at once).
            let cut = state.withLock { state in
                state.position = nil
                defer { state.connections = [:] }
                return state.connections.values.flatMap(\.values)
            }
            for connection in cut { connection.close(.fellBehind) }
            if !cut.isEmpty {
                logger.warning("The subscription hub lost the change feed; its connections resume by seq", metadata: ["connections": "\(cut.count)"])
            }
            await cancelWhenGracefulShutdown { try? await Task.sleep(for: .seconds(1)) }
        }
    }

    private func open(at position: Int64) {
        let waiters = state.withLock { state in
            state.position = position
            for waiter in state.waiters {
                state.connections[waiter.app, default: [:]][ObjectIdentifier(waiter.connection)] = waiter.connection
            }
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.continuation.resume(returning: position) }
    }

    private func stop() {
        let waiters = state.withLock { state in
            state.stopped = true
            state.position = nil
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.continuation.resume(returning: nil) }
    }

    /// Hands one change to the connections it may be for.
    private func fanOut(_ change: ChangeRecord) async {
        let connections = state.withLock { state in
            state.position = change.seq
            if change.kind == SessionEvents.kind { return state.connections.values.flatMap(\.values) }
            return Array((state.connections[change.entityId] ?? [:]).values)
        }
        guard change.kind == DataRuntime.changeKind else {
            for connection in connections { connection.sessionsEnded(account: change.entityId) }
            return
        }
        let live = connections.flatMap { connection in connection.collect(change).map { (connection, $0) } }
        guard !live.isEmpty else { return }
        await GraphQLWSConnection.deliver(change, to: live, logger: logger)
    }
}
