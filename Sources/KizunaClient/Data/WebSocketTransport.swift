import Foundation
import KizunaCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
    import HTTPTypes
    import Logging
    import NIOWebSocket
    import WSClient
#endif

/// One open WebSocket, as the subscription client uses it: text messages in and out, and how it closed.
protocol WebSocketConnection: Sendable {
    /// Writes a text message.
    func send(_ text: String) async throws
    /// The next text message, or `nil` once the socket closed (``closeCode()`` then says how).
    func receive() async throws -> String?
    /// Closes the socket with this code and reason.
    func close(code: UInt16, reason: String) async
    /// The close code and reason the socket closed with; `nil` while open, or when it closed without a close frame.
    func closeCode() async -> (code: UInt16, reason: String)?
}

/// Opens WebSockets: `URLSessionWebSocketTask` on Apple platforms, swift-websocket's client on Linux.
struct WebSocketConnector: Sendable {
    let open: @Sendable (_ url: URL, _ subprotocol: String) async throws -> any WebSocketConnection

    /// The platform's WebSocket client.
    static func platform(session: URLSession = .shared) -> WebSocketConnector {
        #if canImport(FoundationNetworking)
            WebSocketConnector { url, subprotocol in try await NIOWebSocketConnection.open(url, subprotocol: subprotocol) }
        #else
            WebSocketConnector { url, subprotocol in URLSessionWebSocketConnection(session: session, url: url, subprotocol: subprotocol) }
        #endif
    }
}

#if canImport(FoundationNetworking)
    /// swift-websocket's client, whose connection lives for the length of a closure, turned into a connection object:
    /// the closure runs in a task of its own, handing out its writer and passing messages on, until the socket closes.
    final class NIOWebSocketConnection: WebSocketConnection {
        private let messages: AsyncThrowingStream<String, any Error>
        private let outbound: WebSocketOutboundWriter
        private let ended: Locked<(code: UInt16, reason: String)?>

        private init(
            messages: AsyncThrowingStream<String, any Error>, outbound: WebSocketOutboundWriter, ended: Locked<(code: UInt16, reason: String)?>
        ) {
            self.messages = messages
            self.outbound = outbound
            self.ended = ended
        }

        static func open(_ url: URL, subprotocol: String) async throws -> NIOWebSocketConnection {
            let (writers, opened) = AsyncStream.makeStream(of: WebSocketOutboundWriter.self)
            let (messages, received) = AsyncThrowingStream.makeStream(of: String.self)
            let ended = Locked<(code: UInt16, reason: String)?>(nil)
            var headers = HTTPFields()
            headers[.secWebSocketProtocol] = subprotocol
            let configuration = WebSocketClientConfiguration(maxFrameSize: 1 << 24, additionalHeaders: headers, closeTimeout: .seconds(5))
            var logger = Logger(label: "kizuna.websocket")
            logger.logLevel = .critical
            // Runs until the socket closes; the connection object holds only its writer and its messages.
            Task {
                do {
                    let frame = try await WebSocketClient.connect(url: url.absoluteString, configuration: configuration, logger: logger) {
                        inbound, outbound, _ in
                        opened.yield(outbound)
                        for try await message in inbound.messages(maxSize: 1 << 24) {
                            if case .text(let text) = message { received.yield(text) }
                        }
                    }
                    if let frame { ended.withLock { $0 = (UInt16(webSocketErrorCode: frame.closeCode), frame.reason ?? "") } }
                    received.finish()
                } catch {
                    received.finish(throwing: error)
                }
                opened.finish()
            }
            var iterator = writers.makeAsyncIterator()
            guard let outbound = await iterator.next() else {
                // It never opened: the connect's error, when it failed with one.
                var failure = messages.makeAsyncIterator()
                _ = try await failure.next()
                throw KizunaError(.transport, "The WebSocket to \(url.absoluteString) closed before it opened.")
            }
            return NIOWebSocketConnection(messages: messages, outbound: outbound, ended: ended)
        }

        func send(_ text: String) async throws {
            try await outbound.write(.text(text))
        }

        func receive() async throws -> String? {
            var iterator = messages.makeAsyncIterator()
            return try await iterator.next()
        }

        func close(code: UInt16, reason: String) async {
            try? await outbound.close(WebSocketErrorCode(codeNumber: Int(code)), reason: reason)
        }

        func closeCode() async -> (code: UInt16, reason: String)? {
            ended.withLock { $0 }
        }
    }
#else
    /// `URLSessionWebSocketTask`: opened when made; the first send or receive fails if it could not be.
    final class URLSessionWebSocketConnection: WebSocketConnection {
        private let task: URLSessionWebSocketTask

        init(session: URLSession, url: URL, subprotocol: String) {
            task = session.webSocketTask(with: url, protocols: [subprotocol])
            task.maximumMessageSize = 1 << 24
            task.resume()
        }

        func send(_ text: String) async throws {
            try await task.send(.string(text))
        }

        func receive() async throws -> String? {
            do {
                switch try await task.receive() {
                case .string(let text): return text
                case .data(let data): return String(decoding: data, as: UTF8.self)
                @unknown default: return nil
                }
            } catch {
                if task.closeCode != .invalid { return nil }
                throw error
            }
        }

        func close(code: UInt16, reason: String) async {
            task.cancel(with: URLSessionWebSocketTask.CloseCode(rawValue: Int(code)) ?? .normalClosure, reason: Data(reason.utf8))
        }

        func closeCode() async -> (code: UInt16, reason: String)? {
            guard task.closeCode != .invalid else { return nil }
            return (UInt16(task.closeCode.rawValue), task.closeReason.map { String(decoding: $0, as: UTF8.self) } ?? "")
        }
    }
#endif
