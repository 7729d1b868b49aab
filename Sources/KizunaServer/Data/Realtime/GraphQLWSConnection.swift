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
/// Its work runs in one task group for the life of the socket:
/// - the reader hands every text frame to the machine (a binary frame closes with 4400) and performs the answer in
///   order: a `subscribe` of a subscription is parsed and checked before the next frame is read, so a `ping` sent after
///   it is answered once the subscription hears changes;
/// - the timers: the wait for `connection_init` and the keep-alive `ping`;
/// - the change dispatcher (`GraphQLWSConnection+Feed.swift`): one change-feed subscription for the whole connection,
///   which replays each subscription from its `since` and then hands it the live changes it may read;
/// - one child task per `connection_init` check and per query or mutation (`GraphQLWSConnection+Operations.swift`),
///   so that a slow one holds up neither `ping` nor the others.
///
/// Messages are written as they are made, with the socket's backpressure: a client that reads slowly slows its own
/// deliveries, whose changes wait in a buffer of ``GraphQLWSSettings/maxPendingChanges``; past that the connection is
/// closed with 4410 (``GraphQLWSCloseCode/fellBehind``) to resume from its last seq, and nobody else waits for it.
final class GraphQLWSConnection: Sendable {
    typealias Subscription = GraphQLWSServerStateMachine.Subscription

    /// What connections need from the server.
    struct Services: Sendable {
        let schemas: LiveDataSchemas
        let callers: DataCallers
        let executor: GraphQLExecutor
        let feed: ChangeFeed
        let settings: GraphQLWSSettings
        /// The largest message a client may send, in bytes (the server's body limit).
        let maxMessageBytes: Int
    }

    /// A subscription that hears of changes, as the dispatcher delivers to it.
    struct LiveSubscription: Sendable {
        var subscription: Subscription
        var request: SubscriptionRequest
        /// The app's data API at the schema version the subscription was checked on.
        var runtime: DataRuntime
        var caller: DataCaller
        /// The last seq it was sent or has seen: changes at or before it are never sent again.
        var lastSeq: Int64
    }

    /// What the dispatcher works through, in order.
    enum FeedEvent: Sendable {
        /// A subscription to replay from its `since` and then keep live.
        case start(LiveSubscription)
        /// A data change of this app, from the feed.
        case change(ChangeRecord)
        /// Sessions of the connection's user ended (``SessionEvents``): re-check its own before delivering more.
        case sessionsEnded
    }

    /// The close frame the server sends.
    struct CloseFrame: Sendable {
        var code: GraphQLWSCloseCode
        var reason: String
    }

    struct State: Sendable {
        var machine: GraphQLWSServerStateMachine
        /// Who the connection is, once `connection_init` was accepted.
        var caller = DataCaller()
        /// The session whose access token `connection_init` presented, if any: re-checked when the token expires and
        /// when sessions of its user end, and the connection closed with 4403 once it is over.
        var session: AuthenticatedSession?
        /// The subscriptions that hear changes, by id.
        var live: [String: LiveSubscription] = [:]
        /// The close frame to send, when the server closes.
        var closeFrame: CloseFrame?
        /// The connection is over: nothing more is read, started or delivered.
        var finished = false
    }

    let app: String
    /// Names the connection in the log and in internal errors' messages.
    let id = hex(randomBytes(6))
    let services: Services
    let outbound: WebSocketOutboundWriter
    let logger: Logger
    let state: Mutex<State>
    /// Work started by the reader that runs beside it: `connection_init` checks, queries and mutations.
    let operations: AsyncStream<@Sendable () async -> Void>
    let operationQueue: AsyncStream<@Sendable () async -> Void>.Continuation
    /// Changes and subscription starts, for the dispatcher; bounded by ``GraphQLWSSettings/maxPendingChanges``.
    let events: AsyncStream<FeedEvent>
    let eventQueue: AsyncStream<FeedEvent>.Continuation
    /// Finishes once the dispatcher's feed subscription is open: the reader waits for it, so that every subscription
    /// starts after the feed position it is replayed up to was taken.
    let feedOpened: AsyncStream<Void>
    let feedOpenedSignal: AsyncStream<Void>.Continuation

    private init(app: String, services: Services, outbound: WebSocketOutboundWriter, logger: Logger) {
        self.app = app
        self.services = services
        self.outbound = outbound
        var logger = logger
        logger[metadataKey: "app"] = .string(app)
        self.logger = logger
        state = Mutex(State(machine: GraphQLWSServerStateMachine(maximumSubscriptions: services.settings.maximumSubscriptions)))
        (operations, operationQueue) = AsyncStream.makeStream(of: (@Sendable () async -> Void).self)
        (events, eventQueue) = AsyncStream.makeStream(
            of: FeedEvent.self, bufferingPolicy: .bufferingOldest(max(1, services.settings.maxPendingChanges)))
        (feedOpened, feedOpenedSignal) = AsyncStream.makeStream(of: Void.self)
    }

    /// Serves a connection of `app` until it closes: the peer closes it, the server does (the machine decided, or the
    /// server shuts down: 1001), or the socket fails.
    static func serve(
        app: String, services: Services, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, logger: Logger
    ) async {
        let connection = GraphQLWSConnection(app: app, services: services, outbound: outbound, logger: logger)
        await connection.run(inbound)
    }

    private func run(_ inbound: WebSocketInboundStream) async {
        logger.debug("graphql-transport-ws connection opened", metadata: ["connection": "\(id)"])
        await withGracefulShutdownHandler {
            // Discarding: a connection that runs queries for hours keeps none of the finished ones.
            await withDiscardingTaskGroup { group in
                group.addTask { await self.read(inbound) }
                group.addTask { await self.timers() }
                group.addTask { await self.deliverChanges() }
                // Ends when the connection finishes (or this task is cancelled).
                for await operation in self.operations {
                    group.addTask { await operation() }
                }
                await self.sendCloseFrame()
                group.cancelAll()
            }
        } onGracefulShutdown: {
            self.close(.goingAway)
        }
        logger.debug("graphql-transport-ws connection closed", metadata: ["connection": "\(id)"])
    }

    /// Reads the client's messages until the connection ends, each through the rate limit, assembling fragmented
    /// ones up to the size limit: past either, the connection closes (4430, 1009) naming the limit.
    private func read(_ inbound: WebSocketInboundStream) async {
        for await _ in feedOpened {}
        var rateLimit = MessageRateLimit(rate: services.settings.maxMessagesPerSecond)
        var message: (text: Bool, bytes: ByteBuffer)?
        do {
            for try await frame in inbound {
                var data = frame.data
                switch frame.opcode {
                case .text, .binary:
                    guard message == nil else {
                        close(.invalidMessage, reason: "Invalid message: a message began before the previous one's last fragment")
                        return
                    }
                    message = (frame.opcode == .text, data)
                case .continuation:
                    guard message != nil else {
                        close(.invalidMessage, reason: "Invalid message: a continuation frame with no message to continue")
                        return
                    }
                    message?.bytes.writeBuffer(&data)
                }
                guard let whole = message, whole.bytes.readableBytes <= services.maxMessageBytes else {
                    close(.messageTooBig, reason: "Message too big: at most \(services.maxMessageBytes) bytes")
                    return
                }
                guard frame.fin else { continue }
                message = nil
                guard rateLimit.admit(at: .now) else {
                    close(.tooManyMessages, reason: "Too many messages: at most \(rateLimit.rate) per second")
                    return
                }
                guard whole.text else {
                    // graphql-ws reads a binary frame as text; the protocol's messages are text, and nothing Kizuna
                    // serves sends binary, so one is a client's mistake worth saying.
                    close(.invalidMessage, reason: "Invalid message: graphql-transport-ws messages are text frames, not binary")
                    return
                }
                await perform(state.withLock { $0.machine.receive(String(buffer: whole.bytes)) })
                if state.withLock({ $0.finished }) { return }
            }
        } catch {
            logger.debug("Reading a graphql-transport-ws connection failed", metadata: ["connection": "\(id)", "error": "\(error)"])
        }
        // The peer closed the socket (its close frame is answered for us), or it failed.
        await perform(state.withLock { $0.machine.socketClosed() })
        finish(sending: nil)
    }

    /// The connection's timers, in one task: the wait for `connection_init` (4408 when none came in time), and a
    /// `ping` every keep-alive interval; the machine closes with 4411 when nothing was heard since the previous one.
    private func timers() async {
        let clock = ContinuousClock()
        var initDue: ContinuousClock.Instant? = clock.now + services.settings.initTimeout
        var pingDue = clock.now + services.settings.keepAliveInterval
        while true {
            let next = initDue.map { min($0, pingDue) } ?? pingDue
            do {
                try await Task.sleep(until: next, clock: clock)
            } catch {
                return
            }
            if let due = initDue, due <= next {
                initDue = nil
                await perform(state.withLock { $0.machine.initTimeoutFired() })
            }
            if pingDue <= next {
                pingDue = next + services.settings.keepAliveInterval
                await perform(state.withLock { $0.machine.pingTimerFired() })
            }
        }
    }

    /// Does what the machine decided.
    func perform(_ action: GraphQLWSServerStateMachine.Action) async {
        switch action {
        case .none:
            return
        case .send(let message):
            await send(message)
        case .authenticate(let payload):
            // Checked beside the reader: a `subscribe` sent before the answer is refused (4401), as graphql-ws does.
            operationQueue.yield { await self.authenticate(payload) }
        case .start(let subscription, let payload):
            await Self.shortLived { await self.start(subscription, payload) }
        case .stop(let subscriptions):
            stop(subscriptions)
        case .close(let code, let reason, let stopping):
            stop(stopping)
            finish(sending: CloseFrame(code: code, reason: reason))
        }
    }

    /// Runs `work` in a child task that ends with it, and waits for it.
    ///
    /// A task keeps the memory its deepest call took (its allocator's slabs) for as long as it lives. The connection's
    /// long-lived tasks (the reader, the dispatcher) would each keep tens of kilobytes after one subscription's parse
    /// or replay, or one delivery's execution, for hours; run in a child, those frames are freed when it returns.
    static func shortLived(_ work: @escaping @Sendable () async -> Void) async {
        await withDiscardingTaskGroup { group in group.addTask { await work() } }
    }

    /// Closes the connection from the server's side: shutdown (1001), a connection that fell behind (4410).
    func close(_ code: GraphQLWSCloseCode, reason: String? = nil) {
        let action = state.withLock { $0.machine.close(code, reason: reason) }
        if case .close(let code, let reason, let stopping) = action {
            stop(stopping)
            finish(sending: CloseFrame(code: code, reason: reason))
        }
    }

    /// Writes a message as a text frame. Failures are the socket's, which the reader hears of too.
    func send(_ message: GraphQLWSMessage) async {
        do {
            try await outbound.write(.text(String(decoding: message.json.jsonBytes, as: UTF8.self)))
        } catch {
            logger.debug("Writing to a graphql-transport-ws connection failed", metadata: ["connection": "\(id)", "error": "\(error)"])
        }
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

    /// Ends the connection's work, once: no more operations start and the dispatcher stops; the run sends `frame`.
    private func finish(sending frame: CloseFrame?) {
        let first = state.withLock { state in
            guard !state.finished else { return false }
            state.finished = true
            state.closeFrame = frame
            state.live = [:]
            return true
        }
        guard first else { return }
        operationQueue.finish()
        eventQueue.finish()
    }

    /// Sends the close frame the server decided on, if any, waiting at most ``GraphQLWSSettings/closeTimeout`` for a
    /// socket that stopped taking data.
    private func sendCloseFrame() async {
        guard let frame = state.withLock({ $0.closeFrame }) else { return }
        logger.debug("Closing a graphql-transport-ws connection", metadata: ["connection": "\(id)", "code": "\(frame.code)"])
        let outbound = self.outbound
        let timeout = services.settings.closeTimeout
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                try? await outbound.close(WebSocketErrorCode(codeNumber: Int(frame.code.rawValue)), reason: frame.reason)
            }
            group.addTask { try? await Task.sleep(for: timeout) }
            _ = await group.next()
            group.cancelAll()
        }
    }
}
