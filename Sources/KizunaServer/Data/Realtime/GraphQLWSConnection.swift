import HummingbirdWebSocket
import KizunaCore
import Logging
import NIOCore
import NIOWebSocket
import ServiceLifecycle
import Synchronization

/// One `graphql-transport-ws` connection of the data API: the thin I/O layer around a ``GraphQLWSServerStateMachine``,
/// which decides everything the protocol says; this class performs what it decides.
///
/// An idle connection costs one task, hummingbird-websocket's own, which reads the client's messages:
/// - each text frame goes to the machine (a binary frame closes with 4400) and its answer is performed in order: a
///   `subscribe` of a subscription is parsed and checked (in a child task, so the reader keeps no memory of it) before
///   the next frame is read, so a `ping` sent after it is answered once the subscription hears changes;
/// - the timers — the wait for `connection_init`, the keep-alive `ping`, the session's re-check — are scheduled on the
///   channel's event loop, not waited for by a task;
/// - changes come from the ``SubscriptionHub``, which writes their `next` frames itself, or, while the connection has
///   work of its own in order (a subscription replayed from its `since`), queues them for the connection's drainer
///   (`GraphQLWSConnection+Feed.swift`);
/// - a `connection_init` check, a query or mutation, the drainer and a session re-check each run in a task of their
///   own (`GraphQLWSConnection+Operations.swift`), so that a slow one holds up neither `ping` nor the others; the
///   connection cancels and waits for them when it ends.
///
/// Messages are written as they are made (``GraphQLWSFrameWriter``). A client that reads slowly leaves them in NIO's
/// buffer; once it holds more than NIO's high watermark, ``GraphQLWSSettings/maxPendingChanges`` more deliveries are
/// allowed, and then the connection is closed with 4410 (``GraphQLWSCloseCode/fellBehind``) to resume from its last
/// seq, and nobody else waits for it.
///
/// Ten thousand idle connections are the common case, so what one holds is kept small (Benchmarks/RESULTS.md): in the
/// reader task, one async frame of Kizuna's (``run(_:refusing:)``); in this object, the state and references to what
/// is shared (``Services``, and each subscription's parsed ``SubscriptionRequest``, shared by every subscriber that
/// sent the same document and variables).
final class GraphQLWSConnection: Sendable {
    typealias Subscription = GraphQLWSServerStateMachine.Subscription

    /// A subscription that hears of changes. What never changes is held once, by reference: the hub copies these for
    /// every change.
    struct LiveSubscription: Sendable {
        final class Checked: Sendable {
            let subscription: Subscription
            let request: SubscriptionRequest
            /// The app's data API at the schema version the subscription was checked on.
            let runtime: DataRuntime

            init(subscription: Subscription, request: SubscriptionRequest, runtime: DataRuntime) {
                self.subscription = subscription
                self.request = request
                self.runtime = runtime
            }
        }

        let checked: Checked
        var caller: DataCaller
        /// The last seq it was sent or has seen: changes at or before it are never sent again.
        var lastSeq: Int64

        var subscription: Subscription { checked.subscription }
        var request: SubscriptionRequest { checked.request }
        var runtime: DataRuntime { checked.runtime }

        init(subscription: Subscription, request: SubscriptionRequest, runtime: DataRuntime, caller: DataCaller, lastSeq: Int64) {
            checked = Checked(subscription: subscription, request: request, runtime: runtime)
            self.caller = caller
            self.lastSeq = lastSeq
        }
    }

    /// A subscription of a connection, as the hub's matcher knows it.
    struct Target: Sendable {
        let connection: GraphQLWSConnection
        let subscription: Subscription
    }

    /// What the drainer works through, in order.
    enum FeedEvent: Sendable {
        /// A subscription to replay from its `since` up to `after` (the connection's position when it was queued), and
        /// then keep live.
        case start(LiveSubscription, after: Int64)
        /// A data change of this app.
        case change(ChangeRecord)
        /// Sessions of the connection's user ended (``SessionEvents``): re-check its own before delivering more.
        case sessionsEnded
    }

    struct State: Sendable {
        var machine: GraphQLWSServerStateMachine
        /// Who the connection is, once `connection_init` was accepted.
        var caller = DataCaller()
        /// The session whose access token `connection_init` presented, if any: re-checked when the token expires and
        /// when sessions of its user end, and the connection closed with 4403 once it is over.
        var session: Session?
        /// Sessions ended (of any user) while `connection_init` was being checked: the session is re-checked once known.
        var sessionEndedDuringCheck = false
        /// The subscriptions that hear changes, by id.
        var live: [String: LiveSubscription] = [:]
        /// The seq of the last change the hub handed this connection (or its position when the connection opened).
        var position: Int64 = 0
        /// Work waiting for the drainer, in order; while there is any (or the drainer runs), changes queue here too.
        var pending: [FeedEvent] = []
        var draining = false
        /// Deliveries made while the channel was over its high watermark, since it was last under.
        var unwritableDeliveries = 0
        /// The tasks running beside the reader, by number.
        var tasks: [Int: Task<Void, Never>] = [:]
        var taskCount = 0
        /// The timers on the channel's event loop: the wait for `connection_init`, the keep-alive `ping`, the session's
        /// re-check.
        var initTimer: Scheduled<Void>?
        var keepAliveTimer: Scheduled<Void>?
        var sessionTimer: Scheduled<Void>?
        /// The connection is over: nothing more is read, started or delivered.
        var finished = false
        /// Sends the server's close frame, once it decided to close.
        var closing: Task<Void, Never>?
    }

    let app: String
    /// Names the connection in the log and in internal errors' messages.
    let id = hex(randomBytes(6))
    let services: Services
    let outbound: WebSocketOutboundWriter
    let writer: GraphQLWSFrameWriter
    let state: Mutex<State>

    /// The server's logger with the app: made when logging, not kept per connection (the connection's id is in each
    /// message's metadata).
    var logger: Logger {
        var logger = services.logger
        logger[metadataKey: "app"] = .string(app)
        return logger
    }

    init(app: String, services: Services, outbound: WebSocketOutboundWriter, writer: GraphQLWSFrameWriter) {
        self.app = app
        self.services = services
        self.outbound = outbound
        self.writer = writer
        state = Mutex(State(machine: GraphQLWSServerStateMachine(maximumSubscriptions: services.settings.maximumSubscriptions)))
    }

    /// Serves the connection until it closes: the peer closes it, the server does (the machine decided, or the server
    /// shuts down), or the socket fails. Reads the client's messages, each through the rate limit, assembling
    /// fragmented ones up to the size limit: past either, the connection closes (4430, 1009) naming the limit.
    ///
    /// This runs in hummingbird-websocket's task for the connection, which lives as long as the socket and keeps the
    /// memory of the deepest call it made (Swift's task allocator frees its slabs only with the task). So everything
    /// here but the waits is synchronous, on the thread's stack (``receive(_:_:)``), and while the connection idles
    /// Kizuna's only async frame in the task is this one, holding the frame iterator and the message assembler.
    /// - Parameter refusing: Close at once with this code (4406: the client did not offer the subprotocol).
    func run(_ inbound: WebSocketInboundStream, refusing: GraphQLWSCloseCode? = nil) async {
        if let refusing {
            close(refusing)
        } else if !open(), await !registerLater() {
            close(.goingAway)
        } else {
            var assembler = makeAssembler()
            var frames = inbound.makeAsyncIterator()
            do {
                reading: while let frame = try await frames.next() {
                    switch receive(frame, &assembler) {
                    case .read: continue
                    case .stop: break reading
                    case .wait(let started):
                        // A subscription's start is waited for, so that what the client sends next finds it live.
                        await started.value
                        if isFinished() { break reading }
                    }
                }
                readEnded(nil)
            } catch {
                readEnded(error)
            }
        }
        await closed()
    }

    @inline(never)
    private func makeAssembler() -> GraphQLWSMessageAssembler {
        GraphQLWSMessageAssembler(maxBytes: services.maxMessageBytes, maxMessagesPerSecond: services.settings.maxMessagesPerSecond)
    }

    @inline(never)
    private func isFinished() -> Bool {
        state.withLock { $0.finished }
    }

    /// The reader stopped: the peer closed the socket (its close frame is answered for us), the socket failed, or the
    /// server is closing it (the machine knows, and does nothing more).
    @inline(never)
    private func readEnded(_ error: (any Error)?) {
        if let error {
            logger.debug("Reading a graphql-transport-ws connection failed", metadata: ["connection": "\(id)", "error": "\(error)"])
        }
        perform(state.withLock { $0.machine.socketClosed() })
    }

    /// Registers the connection with the hub if it runs, and starts its timers.
    /// - Returns: `false` when it still has to be registered (``registerLater()``).
    @inline(never)
    private func open() -> Bool {
        logger.debug("graphql-transport-ws connection opened", metadata: ["connection": "\(id)"])
        guard let position = services.hub.registerNow(self, app: app) else { return false }
        started(at: position)
        return true
    }

    /// Waits for the hub to run, then registers the connection and starts its timers; `false` when the hub stopped or
    /// the server is shutting down.
    private func registerLater() async -> Bool {
        guard let position = await cancelWhenGracefulShutdown({ await self.services.hub.register(self, app: self.app) }) else {
            return false
        }
        started(at: position)
        return true
    }

    private func started(at position: Int64) {
        state.withLock { $0.position = position }
        schedule(\.initTimer, after: services.settings.initTimeout) { $0.initTimeoutFired() }
        scheduleKeepAlive()
    }

    /// After the reader ends: the connection leaves the hub, and its tasks are cancelled and waited for.
    private func closed() async {
        services.hub.unregister(self, app: app)
        finish(sending: nil)
        let running = state.withLock { Array($0.tasks.values) }
        for task in running {
            task.cancel()
            await task.value
        }
        // The close frame goes out before the handler returns, or hummingbird-websocket would send its own (1000).
        await state.withLock { $0.closing }?.value
        logger.debug("graphql-transport-ws connection closed", metadata: ["connection": "\(id)"])
    }

    /// What the reader does after a frame.
    private enum Step {
        case read
        /// Wait for this task (a subscription starting) before reading on.
        case wait(Task<Void, Never>)
        case stop
    }

    /// Hands one frame to the assembler, and a whole message to the machine, and does what it decides.
    @inline(never)  // on the thread's stack: inlined into run(_:refusing:), its temporaries would enlarge the task's frame
    private func receive(_ frame: WebSocketDataFrame, _ assembler: inout GraphQLWSMessageAssembler) -> Step {
        if isFinished() { return .stop }  // closing: the close frame is out, or on its way
        switch assembler.add(frame, at: .now) {
        case .partial:
            return .read
        case .refused(let code, let reason):
            close(code, reason: reason)
            return .stop
        case .message(let text):
            if let started = perform(state.withLock { $0.machine.receive(text) }) { return .wait(started) }
            return isFinished() ? .stop : .read
        }
    }

    /// Schedules a machine event on the channel's event loop: `fire` is called after `delay` under the lock, and what
    /// it decides is performed.
    func schedule(
        _ name: WritableKeyPath<State, Scheduled<Void>?>, after delay: Duration,
        _ fire: @escaping @Sendable (inout GraphQLWSServerStateMachine) -> GraphQLWSServerStateMachine.Action
    ) {
        schedule(name, after: delay) { _ = self.perform(self.state.withLock { fire(&$0.machine) }) }
    }

    /// Schedules `work` on the channel's event loop after `delay`, replacing the timer of that name; nothing once the
    /// connection finished.
    func schedule(_ name: WritableKeyPath<State, Scheduled<Void>?>, after delay: Duration, _ work: @escaping @Sendable () -> Void) {
        let amount = TimeAmount(max(.zero, delay))
        let timer = writer.channel.eventLoop.scheduleTask(in: amount, work)
        let replaced = state.withLock { state -> Scheduled<Void>? in
            guard !state.finished else { return timer }
            defer { state[keyPath: name] = timer }
            return state[keyPath: name]
        }
        replaced?.cancel()
    }

    /// A `ping` every keep-alive interval; the machine closes with 4411 when nothing was heard since the previous one.
    private func scheduleKeepAlive() {
        schedule(\.keepAliveTimer, after: services.settings.keepAliveInterval) {
            self.perform(self.state.withLock { $0.machine.pingTimerFired() })
            self.scheduleKeepAlive()
        }
    }

    /// Runs `work` in a task beside the reader, which the connection cancels and waits for when it ends; nothing once
    /// the connection finished.
    @discardableResult
    func spawn(_ work: @escaping @Sendable () async -> Void) -> Task<Void, Never>? {
        state.withLock { state in
            guard !state.finished else { return nil }
            let number = state.taskCount
            state.taskCount += 1
            let task = Task {
                await work()
                self.state.withLock { state in
                    state.tasks[number] = nil
                    if state.tasks.isEmpty { state.tasks = [:] }  // its storage too: most connections are idle
                }
            }
            state.tasks[number] = task
            return task
        }
    }

    /// Does what the machine decided.
    /// - Returns: The task starting a subscription, for the reader to wait for (``read(_:)``); in a task of its own,
    ///   since the reader lives as long as the socket and would keep the memory a parse took.
    @discardableResult
    func perform(_ action: GraphQLWSServerStateMachine.Action) -> Task<Void, Never>? {
        switch action {
        case .none:
            break
        case .send(let message):
            writer.write(message)
        case .authenticate(let payload):
            // Checked beside the reader: a `subscribe` sent before the answer is refused (4401), as graphql-ws does.
            spawn { await self.authenticate(payload) }
        case .start(let subscription, let payload):
            return spawn { await self.start(subscription, payload) }
        case .stop(let subscriptions):
            stop(subscriptions)
        case .close(let code, let reason, let stopping):
            stop(stopping)
            finish(sending: CloseFrame(code: code, reason: reason))
        }
        return nil
    }

    /// Closes the connection from the server's side: shutdown (1001), a connection that fell behind (4410).
    func close(_ code: GraphQLWSCloseCode, reason: String? = nil) {
        perform(state.withLock { $0.machine.close(code, reason: reason) })
    }

    /// Stops delivering to these subscriptions. A query or mutation runs on to its end; the machine drops its answer.
    private func stop(_ subscriptions: [Subscription]) {
        guard !subscriptions.isEmpty else { return }
        state.withLock { state in
            for subscription in subscriptions where state.live[subscription.id]?.subscription == subscription {
                state.live[subscription.id] = nil
            }
        }
    }

    /// The close frame the server sends.
    struct CloseFrame: Sendable {
        var code: GraphQLWSCloseCode
        var reason: String
    }

    /// Ends the connection's work, once: no more operations start, timers stop, queued changes are dropped, and
    /// `frame` is sent (``sendCloseFrame(_:)``).
    private func finish(sending frame: CloseFrame?) {
        let timers = state.withLock { state -> [Scheduled<Void>] in
            guard !state.finished else { return [] }
            state.finished = true
            state.live = [:]
            state.pending = []
            // Not a task of the connection's: those are cancelled when the reader ends, which may be because of it.
            if let frame { state.closing = Task { await self.sendCloseFrame(frame) } }
            defer { (state.initTimer, state.keepAliveTimer, state.sessionTimer) = (nil, nil, nil) }
            return [state.initTimer, state.keepAliveTimer, state.sessionTimer].compactMap { $0 }
        }
        for timer in timers { timer.cancel() }
    }

    /// Sends the close frame the server decided on, after every message written before it, waiting at most
    /// ``GraphQLWSSettings/closeTimeout`` for a socket that stopped taking data, and for the client's answer: the
    /// socket is then closed, which ends the reader.
    private func sendCloseFrame(_ frame: CloseFrame) async {
        logger.debug("Closing a graphql-transport-ws connection", metadata: ["connection": "\(id)", "code": "\(frame.code)"])
        let (outbound, channel) = (self.outbound, writer.channel)
        let timeout = TimeAmount(services.settings.closeTimeout)
        let deadline = channel.eventLoop.scheduleTask(in: timeout) { channel.close(promise: nil) }
        channel.closeFuture.whenComplete { _ in deadline.cancel() }
        await writer.drained()
        try? await outbound.close(WebSocketErrorCode(codeNumber: Int(frame.code.rawValue)), reason: frame.reason)
    }
}
