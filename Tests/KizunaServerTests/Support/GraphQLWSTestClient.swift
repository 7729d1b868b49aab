import Foundation
import HTTPTypes
import HummingbirdTesting
import HummingbirdWSClient
import KizunaCore
import Logging
import NIOCore
import NIOWebSocket
import Testing

/// A graphql-transport-ws client over a real loopback WebSocket (swift-websocket's client), for the endpoint tests: it
/// sends messages and reads the server's one at a time.
struct GraphQLWSTestClient {
    private var messages: WebSocketInboundMessageStream.AsyncIterator
    private let outbound: WebSocketOutboundWriter

    /// What a session ended with: the server's close frame (its code as a number), or `nil` for none.
    struct Closed: Sendable {
        var code: UInt16?
        var reason: String?
    }

    /// A session that had not ended within its limit.
    struct TimedOut: Error, CustomStringConvertible {
        var limit: Duration
        var description: String { "The WebSocket session had not ended after \(limit)." }
    }

    /// Connects to `/v1/apps/{app}/graphql` on the server, offering `subprotocols`, runs `body`, and answers how the
    /// connection closed. A session that has not ended within `limit` fails instead of hanging the suite.
    static func connect(
        _ server: TestServer, app: String = "shop", subprotocols: String? = "graphql-transport-ws", limit: Duration = .seconds(60),
        _ body: @escaping @Sendable (inout GraphQLWSTestClient) async throws -> Void
    ) async throws -> Closed {
        let port = try #require(server.client.port)
        // The session and the limit race, and the first to finish answers without waiting for the other: a session
        // stuck where cancellation does not reach (the client's upgrade waits on a future) fails its test rather than
        // hanging the whole suite.
        let (outcomes, outcome) = AsyncStream.makeStream(of: Result<WebSocketCloseFrame?, any Error>.self)
        let session = Task {
            var headers: HTTPFields = [:]
            if let subprotocols { headers[.secWebSocketProtocol] = subprotocols }
            let configuration = WebSocketClientConfiguration(maxFrameSize: 1 << 22, additionalHeaders: headers)
            var logger = Logger(label: "graphql-ws-test-client")
            logger.logLevel = .warning
            do {
                let frame = try await WebSocketClient.connect(
                    url: "ws://127.0.0.1:\(port)/v1/apps/\(app)/graphql", configuration: configuration, logger: logger
                ) { inbound, outbound, _ in
                    var client = GraphQLWSTestClient(messages: inbound.messages(maxSize: 1 << 22).makeAsyncIterator(), outbound: outbound)
                    try await body(&client)
                }
                outcome.yield(.success(frame))
            } catch {
                outcome.yield(.failure(error))
            }
        }
        let timer = Task {
            try? await Task.sleep(for: limit)
            if !Task.isCancelled { outcome.yield(.failure(TimedOut(limit: limit))) }
        }
        var first = outcomes.makeAsyncIterator()
        let result = await first.next() ?? .failure(TimedOut(limit: limit))
        timer.cancel()
        session.cancel()
        let frame = try result.get()
        return Closed(code: frame.map { UInt16(webSocketErrorCode: $0.closeCode) }, reason: frame?.reason)
    }

    /// Sends a message.
    func send(_ message: GraphQLWSMessage) async throws {
        try await outbound.write(.text(try message.text()))
    }

    /// Sends a text frame as it is.
    func send(text: String) async throws {
        try await outbound.write(.text(text))
    }

    /// Sends one text message split into frames, one per part.
    func send(fragments: [String]) async throws {
        try await outbound.withTextMessageWriter { writer in
            for part in fragments { try await writer(part) }
        }
    }

    /// Sends a binary frame.
    func send(binary: [UInt8]) async throws {
        try await outbound.write(.binary(ByteBuffer(bytes: binary)))
    }

    /// The server's next message, or `nil` once it closed the connection.
    mutating func receive() async throws -> GraphQLWSMessage? {
        guard let message = try await messages.next() else { return nil }
        guard case .text(let text) = message else {
            Issue.record("The server sent a binary frame")
            return nil
        }
        return try GraphQLWSMessage(text: text)
    }

    /// Sends `connection_init` with a session token (or none) and expects `connection_ack`.
    mutating func initialize(token: String?) async throws {
        let payload: [String: JSONValue]? = token.map { ["authorization": .string("Bearer \($0)")] }
        try await send(.connectionInit(payload: payload))
        var answer = try await receive()
        // The server may ping first, when its keep-alive interval is short.
        while case .ping? = answer {
            try await send(.pong(payload: nil))
            answer = try await receive()
        }
        try #require(answer?.kind == .connectionAck, "expected connection_ack, got \(String(describing: answer))")
    }

    /// Sends a `ping` and reads up to its `pong`: everything the server sent before answering it, in order. The server
    /// reads messages in order, so whatever it did for the messages sent before the ping is done by then.
    mutating func untilPong() async throws -> [GraphQLWSMessage] {
        let marker = "barrier-\(UUID().uuidString)"
        try await send(.ping(payload: ["marker": .string(marker)]))
        var before: [GraphQLWSMessage] = []
        while let message = try await receive() {
            if case .pong(let payload) = message, payload?["marker"] == .string(marker) { return before }
            before.append(message)
        }
        Issue.record("The connection closed before the pong; it had sent \(before)")
        return before
    }

    /// Reads messages until `count` of them are for operation `id`, and answers those (others are dropped; the server's
    /// keep-alive pings are answered, as a client must, so a long wait under load is not closed with 4411).
    mutating func messages(for id: String, count: Int) async throws -> [GraphQLWSMessage] {
        var found: [GraphQLWSMessage] = []
        while found.count < count, let message = try await receive() {
            if case .ping = message { try await send(.pong(payload: nil)) }
            if message.id == id { found.append(message) }
        }
        return found
    }
}
