/// The client side of `graphql-transport-ws` as Kizuna's SDK speaks it, decided event by event: one socket shared by
/// every subscription, opened when the first one starts and closed after the last one ends, reconnected with backoff
/// after any close a retry can fix, and every subscription resumed after the last `seq` it delivered, so that nothing
/// is missed or delivered twice across a reconnect or a server restart.
///
/// A value with no I/O and no clock: the SDK's connection feeds it what happened (``subscribe(_:_:)``,
/// ``socketOpened()``, ``received(_:)``, ``socketClosed(code:reason:)``, …) and performs the ``Action``s it answers, in
/// order. Tests drive it with tables of events.
///
/// Resuming: a subscription whose document declares the variable `$since` (as every model subscription Kizuna serves
/// takes it, and as generated operations declare it) is sent again after a reconnect with `since` set to the last
/// `extensions.seq` it delivered. One whose document does not declare it cannot be resumed: after a reconnect it is
/// sent as it was, and its first delivery is preceded by ``Action/gap(_:)`` so that the app knows it may have missed
/// changes and syncs. A `since` older than the server's change log is answered with an error coded `sync_expired`,
/// which becomes ``Action/resync(_:)`` (the app syncs, `syncX`) and the subscription sent again without `since`, live
/// from then on.
public struct GraphQLWSClientStateMachine: Sendable {
    /// Where the connection is, as the SDK reports it to the app (Amplify's connection states).
    public enum ConnectionState: Sendable, Hashable {
        /// No socket, and no subscription that needs one.
        case idle
        /// Opening a socket, or waiting for the server's `connection_ack`.
        case connecting
        /// Acknowledged: subscriptions are live.
        case connected
        /// The socket closed; a reconnect is due after the ``Action/reconnect(attempt:)`` delay.
        case disconnected
        /// Closed for good: the app closed it, or the server closed it with a code a retry cannot fix.
        case closed
    }

    /// A subscription the app started and has not ended.
    public struct Operation: Sendable, Hashable {
        public var payload: GraphQLWSSubscribePayload
        /// The `extensions.seq` of the last delivery, as the server wrote it (a decimal string).
        public var lastSeq: String?
        /// Whether the document declares `$since`, so that it can be resumed.
        public var resumable: Bool
        /// It was sent on an earlier socket without being resumable: the next delivery may follow a gap.
        var mayHaveGap = false
    }

    /// What to do, in order.
    public enum Action: Sendable, Hashable {
        /// Open a socket (`graphql-transport-ws` subprotocol), then report ``socketOpened()`` or
        /// ``socketClosed(code:reason:)``.
        case connect
        /// Get the `connection_init` payload (the session's access token), then report ``authenticated(_:)``.
        case authenticate
        /// Write these messages.
        case send(GraphQLWSMessage)
        /// Close the socket with this code and reason.
        case close(GraphQLWSCloseCode, reason: String)
        /// Report a reconnect after the backoff of this attempt (``GraphQLWSReconnectBackoff``) with ``reconnectDue()``.
        case reconnect(attempt: Int)
        /// The connection's state changed.
        case state(ConnectionState)
        /// A `next` of this subscription.
        case deliver(id: String, payload: [String: JSONValue])
        /// This subscription may have missed changes (it was not resumable across a reconnect): the app syncs.
        case gap(String)
        /// The server cannot replay what this subscription missed (`sync_expired`): the app syncs; the subscription is
        /// sent again without `since` (the next action) and goes on live.
        case resync(String)
        /// The server ended this subscription with these GraphQL errors.
        case fail(id: String, errors: [[String: JSONValue]])
        /// The server completed this subscription.
        case finish(String)
        /// The connection is closed for good with this code and reason: every subscription has ended with it.
        case terminate(GraphQLWSCloseCode, reason: String)
    }

    public private(set) var state = ConnectionState.idle
    /// The subscriptions the app has not ended, by id.
    public private(set) var operations: [String: Operation] = [:]
    /// Which of them were sent on the current socket.
    private var sent: Set<String> = []
    /// Failed tries since the last acknowledged connection.
    public private(set) var attempt = 0
    /// A socket is open (or opening) now.
    private var socket = false

    public init() {}

    // MARK: The app

    /// The app starts a subscription under `id` (unique among its live ones).
    public mutating func subscribe(_ id: String, _ payload: GraphQLWSSubscribePayload) -> [Action] {
        guard state != .closed else { return [.fail(id: id, errors: [Self.closedError])] }
        operations[id] = Operation(payload: payload, resumable: Self.declaresSince(payload.query))
        switch state {
        case .idle:
            state = .connecting
            socket = true
            return [.state(.connecting), .connect]
        case .connected:
            sent.insert(id)
            return [.send(.subscribe(id: id, payload: payload))]
        case .connecting, .disconnected, .closed:
            return []  // sent once acknowledged
        }
    }

    /// The app ends a subscription. The last one to end closes the socket.
    public mutating func unsubscribe(_ id: String) -> [Action] {
        guard operations.removeValue(forKey: id) != nil else { return [] }
        var actions: [Action] = []
        if sent.remove(id) != nil, state == .connected { actions.append(.send(.complete(id: id))) }
        if operations.isEmpty, state != .closed { actions += goIdle() }
        return actions
    }

    /// The app closes the connection for good: every subscription ends.
    public mutating func close() -> [Action] {
        guard state != .closed else { return [] }
        let wasOpen = socket
        state = .closed
        operations = [:]
        sent = []
        socket = false
        return (wasOpen ? [.close(.normalClosure, reason: "Normal Closure")] : []) + [.state(.closed)]
    }

    // MARK: The socket

    /// The socket opened: `connection_init` follows once the payload is known.
    public mutating func socketOpened() -> [Action] {
        guard state == .connecting else { return [] }
        return [.authenticate]
    }

    /// The `connection_init` payload is known.
    public mutating func authenticated(_ payload: [String: JSONValue]?) -> [Action] {
        guard state == .connecting, socket else { return [] }
        return [.send(.connectionInit(payload: payload))]
    }

    /// No `connection_init` payload can be had: the session ended (signed out, refresh refused). Every subscription
    /// ends with `error`'s code; nothing is retried until the app subscribes again.
    public mutating func authenticationFailed(_ code: String, message: String) -> [Action] {
        guard state != .closed else { return [] }
        let ended = operations.keys.sorted()
        operations = [:]
        sent = []
        let error: [String: JSONValue] = ["message": .string(message), "extensions": ["code": .string(code)]]
        return ended.map { .fail(id: $0, errors: [error]) } + goIdle()
    }

    /// A text message arrived.
    public mutating func received(_ text: String) -> [Action] {
        guard socket, state == .connecting || state == .connected else { return [] }
        let message: GraphQLWSMessage
        do {
            message = try GraphQLWSMessage(text: text)
        } catch {
            return [.close(.badResponse, reason: GraphQLWSCloseCode.badResponse.fitting("Bad response: \(error)"))]
        }
        switch message {
        case .connectionAck:
            guard state == .connecting else { return [] }
            state = .connected
            attempt = 0
            var actions: [Action] = [.state(.connected)]
            for id in operations.keys.sorted() {
                guard let operation = operations[id] else { continue }
                sent.insert(id)
                actions.append(.send(.subscribe(id: id, payload: resumed(operation))))
            }
            return actions
        case .ping:
            return [.send(.pong(payload: nil))]
        case .pong, .connectionInit, .subscribe:
            return []
        case .next(let id, let payload):
            guard var operation = operations[id] else { return [] }
            var actions: [Action] = []
            if operation.mayHaveGap {
                operation.mayHaveGap = false
                actions.append(.gap(id))
            }
            if let seq = payload["extensions"]?["seq"]?.stringValue { operation.lastSeq = seq }
            operations[id] = operation
            return actions + [.deliver(id: id, payload: payload)]
        case .error(let id, let errors):
            let expired = errors.contains { $0["extensions"]?["code"]?.stringValue == KizunaError.Code.syncExpired.rawValue }
            if expired, var operation = operations[id] {
                // Too old to replay: it goes on live from now (sent again without `since`), and the app syncs.
                operation.payload.variables?["since"] = nil
                if operation.payload.variables?.isEmpty == true { operation.payload.variables = nil }
                operation.lastSeq = nil
                operation.mayHaveGap = false
                operations[id] = operation
                return [.resync(id), .send(.subscribe(id: id, payload: operation.payload))]
            }
            guard operations.removeValue(forKey: id) != nil else { return [] }
            sent.remove(id)
            return [.fail(id: id, errors: errors)] + (operations.isEmpty ? goIdle() : [])
        case .complete(let id):
            guard operations.removeValue(forKey: id) != nil else { return [] }
            sent.remove(id)
            return [.finish(id)] + (operations.isEmpty ? goIdle() : [])
        }
    }

    /// The socket closed (or could not be opened: `code` `nil`), for whatever reason.
    public mutating func socketClosed(code: GraphQLWSCloseCode?, reason: String) -> [Action] {
        guard socket else { return [] }
        socket = false
        let wasSent = sent
        sent = []
        guard state != .closed, state != .idle else { return [] }
        if let code, code.isFatal {
            state = .closed
            operations = [:]
            return [.state(.closed), .terminate(code, reason: reason)]
        }
        guard !operations.isEmpty else {
            state = .idle
            return [.state(.idle)]
        }
        // Live on the socket that closed, and unable to say where it was: what came meanwhile is lost to it.
        for id in wasSent where operations[id]?.resumable == false { operations[id]?.mayHaveGap = true }
        attempt += 1
        state = .disconnected
        return [.state(.disconnected), .reconnect(attempt: attempt)]
    }

    /// The backoff of ``Action/reconnect(attempt:)`` is over.
    public mutating func reconnectDue() -> [Action] {
        guard state == .disconnected, !socket else { return [] }
        state = .connecting
        socket = true
        return [.state(.connecting), .connect]
    }

    // MARK: Helpers

    /// Closes the socket (the last subscription ended); the machine is idle until the next subscription.
    private mutating func goIdle() -> [Action] {
        let wasOpen = socket
        socket = false
        sent = []
        state = .idle
        return (wasOpen ? [.close(.normalClosure, reason: "Normal Closure")] : []) + [.state(.idle)]
    }

    /// The payload to send for `operation` on a new socket: resumed after its last seq when it can be.
    private func resumed(_ operation: Operation) -> GraphQLWSSubscribePayload {
        guard operation.resumable, let seq = operation.lastSeq else { return operation.payload }
        var payload = operation.payload
        payload.variables = (payload.variables ?? [:]).merging(["since": .string(seq)]) { _, new in new }
        return payload
    }

    /// Whether a document declares the variable `$since` (a word boundary after it, so `$sinceX` is not).
    static func declaresSince(_ query: String) -> Bool {
        let bytes = Array(query.utf8)
        let name = Array("$since".utf8)
        guard bytes.count >= name.count else { return false }
        for start in 0...(bytes.count - name.count) where bytes[start..<(start + name.count)].elementsEqual(name) {
            let end = start + name.count
            guard end < bytes.count else { return true }
            let next = bytes[end]
            let isNamePart = (next >= 0x30 && next <= 0x39) || (next >= 0x41 && next <= 0x5A) || (next >= 0x61 && next <= 0x7A) || next == 0x5F
            if !isNamePart { return true }
        }
        return false
    }

    private static let closedError: [String: JSONValue] = [
        "message": "The connection was closed; open a new one to subscribe.", "extensions": ["code": "unavailable"],
    ]
}

/// How long to wait before reconnect attempt `n`: exponential from ``base`` up to ``maximum``, with jitter, so that
/// the clients of a restarted server do not all come back at the same instant.
public struct GraphQLWSReconnectBackoff: Sendable, Hashable {
    public var base: Duration
    public var maximum: Duration

    public init(base: Duration = .milliseconds(500), maximum: Duration = .seconds(30)) {
        self.base = base
        self.maximum = maximum
    }

    /// The wait before `attempt` (1 for the first reconnect): half of `min(maximum, base × 2^(attempt − 1))` plus up to
    /// as much again, by `random` in `0..<1`.
    public func delay(attempt: Int, random: Double) -> Duration {
        let doublings = min(max(attempt - 1, 0), 30)
        let ceiling = min(maximum, base * (1 << doublings))
        return ceiling * (0.5 + 0.5 * min(max(random, 0), 1))
    }
}
