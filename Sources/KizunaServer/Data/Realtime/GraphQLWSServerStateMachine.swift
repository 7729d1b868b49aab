import KizunaCore

/// The server side of one `graphql-transport-ws` connection, without I/O: what to answer each message, when to ask for
/// authentication, which operations start and stop, and when and how to close. Behaviour follows graphql-ws's
/// `makeServer` (src/server.ts) except where a comment says otherwise.
///
/// The connection's life is awaitingInit → authenticating → ready → closed; once closed every event is ``Action/none``.
///
/// ## Driving it
///
/// The WebSocket handler keeps one machine per connection, behind whatever serialises the connection's events (the
/// operations report from their own tasks), and performs each ``Action`` it returns:
///
/// - Before creating it, the handler refuses a handshake without the `graphql-transport-ws` subprotocol (4406,
///   ``GraphQLWSCloseCode/subprotocolNotAcceptable``). Then it starts two timers: the init wait (graphql-ws waits
///   3 s) calling ``initTimeoutFired()``, and the keep-alive interval calling ``pingTimerFired()``.
/// - Every text frame goes to `receive(_:)`; a binary frame too, read as UTF-8, as graphql-ws does.
/// - ``Action/authenticate(payload:)``: check the `connection_init` payload (the session token), then call
///   ``authorized(ackPayload:)`` or ``rejected(reason:)``. A store failure is ``close(_:reason:)`` with 4500.
/// - ``Action/start(_:_:)``: run the operation in a child task. Each result goes through ``next(_:payload:)``, its end
///   through ``subscriptionFinished(_:)``, a failure through ``subscriptionFailed(_:errors:)``; the machine answers
///   ``Action/none`` once the client completed the operation, so nothing is sent for it after its `complete`.
/// - ``Action/stop(_:)``: cancel those operations' tasks (nothing is sent).
/// - ``Action/send(_:)``: write ``GraphQLWSMessage/text()`` as a text frame.
/// - ``Action/close(_:reason:stopping:)``: cancel those tasks, send the close frame, stop reading.
/// - The peer closing or the socket failing: ``socketClosed()``. A server that cannot hand changes out (its hub stopped,
///   or never started): ``close(_:reason:)`` with 1001 (``GraphQLWSCloseCode/goingAway``); a connection whose send
///   buffer filled: 4410 (``GraphQLWSCloseCode/fellBehind``); a session that ended while open: 4403. A graceful
///   shutdown is hummingbird-websocket's: it closes every socket with 1000, and the machine hears ``socketClosed()``.
package struct GraphQLWSServerStateMachine: Sendable {
    /// Where the connection is.
    package enum State: Sendable, Hashable {
        /// Open; no `connection_init` yet.
        case awaitingInit
        /// `connection_init` received; its payload is being checked.
        case authenticating
        /// Acknowledged: operations may be subscribed.
        case ready
        /// Closed or closing: every event is ignored.
        case closed
    }

    /// One run of an operation: the client's id, and a serial the machine gives each start, so that a report from a
    /// run the client completed is never taken for a later run under the same id (the protocol lets a client reuse an
    /// id once it completed it).
    package struct Subscription: Sendable, Hashable {
        /// The id the client chose.
        package var id: String
        /// This run's number on the connection, from 0.
        package var serial: Int

        package init(id: String, serial: Int) {
            self.id = id
            self.serial = serial
        }
    }

    /// What the I/O layer does after an event.
    package enum Action: Sendable, Hashable {
        /// Nothing to do.
        case none
        /// Send this message.
        case send(GraphQLWSMessage)
        /// Check this `connection_init` payload, then report ``authorized(ackPayload:)`` or ``rejected(reason:)``.
        case authenticate(payload: [String: JSONValue]?)
        /// Run this operation.
        case start(Subscription, GraphQLWSSubscribePayload)
        /// Stop running these operations, sending nothing for them.
        case stop([Subscription])
        /// Stop these operations and close the socket with `code` and `reason` (which fits a close frame).
        case close(GraphQLWSCloseCode, reason: String, stopping: [Subscription])
    }

    /// Where the connection is.
    package private(set) var state = State.awaitingInit
    /// How many operations may run at once; a `subscribe` over it is answered with an `error` message.
    package let maximumSubscriptions: Int
    /// The active operations: id → the serial of its run.
    private var active: [String: Int] = [:]
    private var nextSerial = 0
    /// A keep-alive `ping` was sent and nothing has been heard since.
    private var pingOutstanding = false

    /// A machine for a connection that just opened.
    /// - Parameter maximumSubscriptions: How many operations may run at once on the connection (default 100).
    package init(maximumSubscriptions: Int = 100) {
        self.maximumSubscriptions = maximumSubscriptions
    }

    /// The operations running, by serial.
    package var subscriptions: [Subscription] {
        active.map { Subscription(id: $0.key, serial: $0.value) }.sorted { $0.serial < $1.serial }
    }

    /// A text frame arrived.
    ///
    /// - Returns: ``Action/close(_:reason:stopping:)`` with 4400 and the precise reason for a frame that is not a
    ///   protocol message, otherwise what `receive(_:)` answers for the message.
    package mutating func receive(_ text: String) -> Action {
        guard state != .closed else { return .none }
        let message: GraphQLWSMessage
        do {
            message = try GraphQLWSMessage(text: text)
        } catch {
            return close(.invalidMessage, reason: error.reason)
        }
        return receive(message)
    }

    /// A message arrived. Any message shows the peer is alive, answering an outstanding keep-alive `ping`.
    ///
    /// - Returns:
    ///   - `connection_init`: ``Action/authenticate(payload:)`` the first time; 4429 after.
    ///   - `ping`: a `pong` echoing its payload, in every state (graphql-ws answers before `connection_init` too).
    ///   - `pong`: ``Action/none``.
    ///   - `subscribe`: 4401 before the acknowledgement; 4409 for the id of an active operation; an `error` message
    ///     (`limit_exceeded`) over ``maximumSubscriptions``; otherwise ``Action/start(_:_:)``.
    ///   - `complete`: ``Action/stop(_:)`` for an active operation; ``Action/none`` for an unknown id (the protocol says
    ///     to ignore it: the operation may have just ended on the server's side).
    ///   - `connection_ack`, `next`, `error`, which only the server sends: 4400. graphql-ws throws on them, which its
    ///     adapters turn into 4500; the fault is the client's, and 4400 is what the protocol says for a message of a
    ///     type it does not specify.
    package mutating func receive(_ message: GraphQLWSMessage) -> Action {
        guard state != .closed else { return .none }
        pingOutstanding = false
        switch message {
        case .connectionInit(let payload):
            guard state == .awaitingInit else { return close(.tooManyInitialisationRequests) }
            state = .authenticating
            return .authenticate(payload: payload)
        case .ping(let payload):
            return .send(.pong(payload: payload))
        case .pong:
            return .none
        case .subscribe(let id, let payload):
            return subscribe(id: id, payload: payload)
        case .complete(let id):
            guard let serial = active.removeValue(forKey: id) else { return .none }
            return .stop([Subscription(id: id, serial: serial)])
        case .connectionAck, .next, .error:
            return close(.invalidMessage, reason: "Unexpected message of type \(message.kind.rawValue) received")
        }
    }

    private mutating func subscribe(id: String, payload: GraphQLWSSubscribePayload) -> Action {
        // Subscribing while the payload is being checked is as early as before `connection_init`: graphql-ws answers
        // both with 4401, since it acknowledges only once `onConnect` allowed the connection.
        guard state == .ready else { return close(.unauthorized) }
        guard active[id] == nil else { return close(.subscriberAlreadyExists, reason: "Subscriber for \(id) already exists") }
        // One operation too many is the client's mistake about that operation, not about the connection: an `error`
        // ends it alone (the protocol's way to refuse an operation) and the others keep running.
        guard active.count < maximumSubscriptions else {
            return .send(.error(id: id, payload: [tooManySubscriptionsError]))
        }
        let subscription = Subscription(id: id, serial: nextSerial)
        nextSerial += 1
        active[id] = subscription.serial
        return .start(subscription, payload)
    }

    /// The GraphQL error of a `subscribe` over the limit, in the shape of the data API's other limits
    /// (`GraphQLLimits`): `limit_exceeded`, which limit, the maximum and what the request would have made it.
    private var tooManySubscriptionsError: [String: JSONValue] {
        [
            "message": .string(
                "This connection already runs \(maximumSubscriptions) operations, the most it may; complete one before starting another."
            ),
            "extensions": [
                "code": .string(KizunaError.Code.limitExceeded.rawValue), "limit": "subscriptions",
                "maximum": .number(Double(maximumSubscriptions)), "actual": .number(Double(active.count + 1)),
            ],
        ]
    }

    /// The `connection_init` payload was accepted.
    ///
    /// - Parameter ackPayload: What to tell the client in `connection_ack` (absent when `nil`).
    /// - Returns: ``Action/send(_:)`` with `connection_ack` while authenticating, otherwise ``Action/none`` (the
    ///   connection closed while the payload was being checked).
    package mutating func authorized(ackPayload: [String: JSONValue]? = nil) -> Action {
        guard state == .authenticating else { return .none }
        state = .ready
        return .send(.connectionAck(payload: ackPayload))
    }

    /// The `connection_init` payload was refused.
    ///
    /// - Parameter reason: The close reason (`Forbidden` when `nil`); it should not say more than the HTTP API would.
    /// - Returns: ``Action/close(_:reason:stopping:)`` with 4403 while authenticating, otherwise ``Action/none``.
    package mutating func rejected(reason: String? = nil) -> Action {
        guard state == .authenticating else { return .none }
        return close(.forbidden, reason: reason)
    }

    /// The wait for `connection_init` is over.
    ///
    /// - Returns: ``Action/close(_:reason:stopping:)`` with 4408 if no `connection_init` came, otherwise ``Action/none``:
    ///   as in graphql-ws, the timer only waits for the message, not for its payload's check.
    package mutating func initTimeoutFired() -> Action {
        guard state == .awaitingInit else { return .none }
        return close(.connectionInitialisationTimeout)
    }

    /// The keep-alive interval passed.
    ///
    /// - Returns: ``Action/send(_:)`` with a `ping`, or ``Action/close(_:reason:stopping:)`` with 4411
    ///   (``GraphQLWSCloseCode/keepAliveTimeout``) when nothing was heard since the previous one; ``Action/none`` once
    ///   closed.
    package mutating func pingTimerFired() -> Action {
        guard state != .closed else { return .none }
        guard !pingOutstanding else { return close(.keepAliveTimeout) }
        pingOutstanding = true
        return .send(.ping(payload: nil))
    }

    /// An operation produced a result.
    ///
    /// - Returns: ``Action/send(_:)`` with `next` while that run is active, otherwise ``Action/none``.
    package mutating func next(_ subscription: Subscription, payload: [String: JSONValue]) -> Action {
        guard isActive(subscription) else { return .none }
        return .send(.next(id: subscription.id, payload: payload))
    }

    /// Whether a result of that run would be sent now, as ``next(_:payload:)`` decides: for an I/O layer that writes
    /// the `next` message itself (a payload written once for many connections).
    package func isDelivering(_ subscription: Subscription) -> Bool {
        isActive(subscription)
    }

    /// An operation's results ended: a subscription's stream finished, or a query or mutation answered.
    ///
    /// - Returns: ``Action/send(_:)`` with `complete` while that run is active, otherwise ``Action/none`` (the client
    ///   completed it, and needs no reminder).
    package mutating func subscriptionFinished(_ subscription: Subscription) -> Action {
        guard isActive(subscription) else { return .none }
        active[subscription.id] = nil
        return .send(.complete(id: subscription.id))
    }

    /// An operation failed: before it ran (validation, authorization) or while running.
    ///
    /// - Parameter errors: The GraphQL errors, each with a `message`; an empty list is sent as one internal error,
    ///   since the protocol requires at least one.
    /// - Returns: ``Action/send(_:)`` with `error` (and no `complete`, as the protocol says) while that run is active,
    ///   otherwise ``Action/none``.
    package mutating func subscriptionFailed(_ subscription: Subscription, errors: [[String: JSONValue]]) -> Action {
        guard isActive(subscription) else { return .none }
        active[subscription.id] = nil
        let internalError: [String: JSONValue] = [
            "message": "The operation failed.", "extensions": ["code": .string(KizunaError.Code.internalError.rawValue)],
        ]
        return .send(.error(id: subscription.id, payload: errors.isEmpty ? [internalError] : errors))
    }

    /// The server closes the connection: shutting down (1001), the connection fell behind (4410), the session ended
    /// (4403), or something failed (4500).
    ///
    /// - Parameters:
    ///   - code: The close code.
    ///   - reason: The close reason; the code's ``GraphQLWSCloseCode/defaultReason`` when `nil` or too long for a close
    ///     frame.
    /// - Returns: ``Action/close(_:reason:stopping:)`` with every active operation, or ``Action/none`` once closed.
    package mutating func close(_ code: GraphQLWSCloseCode, reason: String? = nil) -> Action {
        guard state != .closed else { return .none }
        let stopping = subscriptions
        state = .closed
        active = [:]
        pingOutstanding = false
        return .close(code, reason: code.fitting(reason ?? code.defaultReason), stopping: stopping)
    }

    /// The peer closed the socket, or it failed.
    ///
    /// - Returns: ``Action/stop(_:)`` with every active operation (possibly none), or ``Action/none`` once closed.
    package mutating func socketClosed() -> Action {
        guard state != .closed else { return .none }
        let stopping = subscriptions
        state = .closed
        active = [:]
        pingOutstanding = false
        return .stop(stopping)
    }

    private func isActive(_ subscription: Subscription) -> Bool {
        active[subscription.id] == subscription.serial
    }
}
