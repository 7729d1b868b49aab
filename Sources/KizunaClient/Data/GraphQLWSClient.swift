import Foundation
import KizunaCore

/// The data API's WebSocket for one app (and API key): every subscription of the app over one `graphql-transport-ws`
/// socket, driven by ``GraphQLWSClientStateMachine``, which decides; this actor performs what it decides.
///
/// The socket opens with the first subscription and closes after the last; a socket that drops is reopened after a
/// jittered backoff, with the session's current access token, and every subscription resumed after the last seq it
/// delivered. Each socket has a generation: whatever an earlier socket reports after a newer one opened is ignored.
actor GraphQLWSClient {
    typealias Machine = GraphQLWSClientStateMachine
    typealias Events = AsyncThrowingStream<SubscriptionEvent<[String: JSONValue]>, any Error>

    private let url: URL
    private let connector: WebSocketConnector
    /// The `connection_init` payload: the session's access token, the API key.
    private let credentials: @Sendable () async throws(KizunaError) -> [String: JSONValue]
    private let backoff: GraphQLWSReconnectBackoff

    private var machine = Machine()
    private var generation = 0
    private var socket: (any WebSocketConnection)?
    /// The current socket's messages, written in order by one task.
    private var outbox: AsyncStream<String>.Continuation?
    private var reconnecting: Task<Void, Never>?
    private var subscribers: [String: Events.Continuation] = [:]
    private var watchers: [Int: AsyncStream<DataConnectionState>.Continuation] = [:]
    private var counter = 0

    init(
        url: URL, connector: WebSocketConnector, backoff: GraphQLWSReconnectBackoff = GraphQLWSReconnectBackoff(),
        credentials: @escaping @Sendable () async throws(KizunaError) -> [String: JSONValue]
    ) {
        self.url = url
        self.connector = connector
        self.backoff = backoff
        self.credentials = credentials
    }

    /// Starts a subscription; it ends when the stream's consumer stops, or the server ends it.
    func subscribe(_ payload: GraphQLWSSubscribePayload) -> Events {
        counter += 1
        let id = String(counter)
        let (events, continuation) = Events.makeStream()
        subscribers[id] = continuation
        continuation.onTermination = { _ in Task { await self.unsubscribe(id) } }
        perform(machine.subscribe(id, payload))
        return events
    }

    /// The connection's states from now on, starting with the current one.
    func states() -> AsyncStream<DataConnectionState> {
        counter += 1
        let key = counter
        let (states, continuation) = AsyncStream.makeStream(of: DataConnectionState.self)
        continuation.yield(machine.state)
        watchers[key] = continuation
        continuation.onTermination = { _ in Task { await self.stopWatching(key) } }
        return states
    }

    private func stopWatching(_ key: Int) {
        watchers[key] = nil
    }

    /// The signed-in account changed: an open socket, authenticated as the account before, is replaced by a new one
    /// with the current credentials, and every subscription resumes on it after the last seq it delivered (a socket
    /// still opening reads the credentials when it authenticates).
    func credentialsChanged() {
        guard let open = socket else { return }
        generation += 1  // whatever the old socket reports from now on is ignored
        socket = nil
        outbox?.finish()
        outbox = nil
        Task { await open.close(code: GraphQLWSCloseCode.normalClosure.rawValue, reason: "The signed-in account changed.") }
        perform(machine.socketClosed(code: nil, reason: "The signed-in account changed."))
    }

    private func unsubscribe(_ id: String) {
        subscribers[id] = nil
        perform(machine.unsubscribe(id))
    }

    // MARK: Performing the machine's actions

    private func perform(_ actions: [Machine.Action]) {
        for action in actions {
            switch action {
            case .connect:
                generation += 1
                let current = generation
                Task { await self.run(current) }
            case .authenticate:
                let current = generation
                Task { await self.authenticate(current) }
            case .send(let message):
                if let text = try? message.text() { outbox?.yield(text) }
            case .close(let code, let reason):
                let closing = socket
                Task { await closing?.close(code: code.rawValue, reason: reason) }
            case .reconnect(let attempt):
                let delay = backoff.delay(attempt: attempt, random: Double.random(in: 0..<1))
                reconnecting = Task {
                    try? await Task.sleep(for: delay)
                    if !Task.isCancelled { self.reconnectDue() }
                }
            case .state(let state):
                for watcher in watchers.values { watcher.yield(state) }
            case .deliver(let id, let payload):
                subscribers[id]?.yield(.value(payload, seq: payload["extensions"]?["seq"]?.stringValue))
            case .gap(let id):
                subscribers[id]?.yield(.resync)
            case .resync(let id):
                // Too old to replay: the app syncs; the machine sends the subscription again, live from now.
                subscribers[id]?.yield(.resync)
            case .fail(let id, let errors):
                subscribers.removeValue(forKey: id)?.finish(throwing: DataError.graphQL(errors.map { GraphQLError(.object($0)) }, data: nil))
            case .finish(let id):
                subscribers.removeValue(forKey: id)?.finish()
            case .terminate(let code, let reason):
                let error = DataError.transport(KizunaError(.transport, "The data API's WebSocket closed with \(code.rawValue): \(reason)"))
                for subscriber in subscribers.values { subscriber.finish(throwing: error) }
                subscribers = [:]
            }
        }
    }

    private func reconnectDue() {
        perform(machine.reconnectDue())
    }

    private func authenticate(_ current: Int) async {
        do {
            let payload = try await credentials()
            guard current == generation else { return }
            perform(machine.authenticated(payload))
        } catch {
            guard current == generation else { return }
            perform(machine.authenticationFailed(error.code.rawValue, message: error.message))
        }
    }

    /// One socket's life: open it, write its outbox in order, read until it closes, and report each step.
    private func run(_ current: Int) async {
        let opened: any WebSocketConnection
        do {
            opened = try await connector.open(url, "graphql-transport-ws")
        } catch {
            guard current == generation else { return }
            perform(machine.socketClosed(code: nil, reason: "\(error)"))
            return
        }
        guard current == generation else {
            await opened.close(code: GraphQLWSCloseCode.normalClosure.rawValue, reason: "Normal Closure")
            return
        }
        socket = opened
        let (messages, outbox) = AsyncStream.makeStream(of: String.self)
        self.outbox = outbox
        let writer = Task {
            for await text in messages { try? await opened.send(text) }
        }
        perform(machine.socketOpened())
        do {
            while let text = try await opened.receive() {
                guard current == generation else { break }
                perform(machine.received(text))
            }
        } catch {
            // A socket that failed rather than closed: reported as closed without a code, which is retried.
        }
        outbox.finish()
        writer.cancel()
        guard current == generation else { return }
        socket = nil
        self.outbox = nil
        let closed = await opened.closeCode()
        perform(machine.socketClosed(code: closed.map { GraphQLWSCloseCode(rawValue: $0.code) }, reason: closed?.reason ?? "The socket closed."))
    }
}

/// What a subscription yields, in the server's order.
public enum SubscriptionEvent<Value: Sendable>: Sendable {
    /// A change, with its `seq` (a decimal string): what a client that stores it resumes from.
    case value(Value, seq: String?)
    /// Changes may have been missed — the server could not replay them, or the subscription could not resume after a
    /// reconnect — so the app syncs (`syncX`) to catch up. The subscription goes on live.
    case resync
}

/// Where the data API's WebSocket is (`app.data.connectionStates()`): connecting, connected, disconnected (a reconnect
/// is due), idle (no subscription needs it) or closed.
public typealias DataConnectionState = GraphQLWSClientStateMachine.ConnectionState

/// An app's data API WebSockets: one ``GraphQLWSClient`` per API key the app uses (most use none), made when first
/// needed and kept for the app's life.
final class DataRealtime: Sendable {
    /// `ws(s)://…/v1/apps/{app}/graphql`.
    let url: URL
    let connector: WebSocketConnector
    let backoff: GraphQLWSReconnectBackoff
    /// The signed-in session's current access token, refreshed when due.
    let accessToken: @Sendable () async throws(KizunaError) -> String?
    private let clients = Locked<[String: GraphQLWSClient]>([:])

    init(
        url: URL, connector: WebSocketConnector, backoff: GraphQLWSReconnectBackoff = GraphQLWSReconnectBackoff(),
        accessToken: @escaping @Sendable () async throws(KizunaError) -> String?
    ) {
        self.url = url
        self.connector = connector
        self.backoff = backoff
        self.accessToken = accessToken
    }

    func client(apiKey: String?) -> GraphQLWSClient {
        clients.withLock { clients in
            if let existing = clients[apiKey ?? ""] { return existing }
            let accessToken = accessToken
            let client = GraphQLWSClient(url: url, connector: connector, backoff: backoff) { () async throws(KizunaError) -> [String: JSONValue] in
                var payload: [String: JSONValue] = [:]
                if let token = try await accessToken() { payload["authorization"] = .string("Bearer \(token)") }
                if let apiKey { payload["x-api-key"] = .string(apiKey) }
                return payload
            }
            clients[apiKey ?? ""] = client
            return client
        }
    }

    /// Reopens every open socket with the current credentials (after a sign-in or sign-out).
    func credentialsChanged() async {
        for client in clients.withLock({ Array($0.values) }) { await client.credentialsChanged() }
    }

    /// The WebSocket address of an HTTP(S) path on `server`.
    static func webSocketURL(_ server: URL, path: String) -> URL? {
        guard var components = URLComponents(url: server, resolvingAgainstBaseURL: false) else { return nil }
        components.scheme = components.scheme?.lowercased() == "https" ? "wss" : "ws"
        components.path = path
        return components.url
    }
}
