import Foundation
import NIOCore
import NIOPosix

/// A plain TCP connection to a test server, for what an HTTP client will not send: half a header, broken chunked
/// framing, a body cut short.
public final class RawConnection: Sendable {
    private let channel: any Channel
    private let inbound: AsyncStream<Result<ByteBuffer, any Error>>

    private init(channel: any Channel, inbound: AsyncStream<Result<ByteBuffer, any Error>>) {
        self.channel = channel
        self.inbound = inbound
    }

    deinit {
        channel.close(promise: nil)
    }

    /// Hands what arrives to an `AsyncStream`; the stream ends when the connection closes or fails.
    private final class Collector: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let continuation: AsyncStream<Result<ByteBuffer, any Error>>.Continuation

        init(_ continuation: AsyncStream<Result<ByteBuffer, any Error>>.Continuation) {
            self.continuation = continuation
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            continuation.yield(.success(unwrapInboundIn(data)))
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if case ChannelEvent.inputClosed = event { continuation.finish() }
        }

        func channelInactive(context: ChannelHandlerContext) {
            continuation.finish()
        }

        func errorCaught(context: ChannelHandlerContext, error: any Error) {
            continuation.yield(.failure(error))
            continuation.finish()
            context.close(promise: nil)
        }
    }

    /// Connects to `127.0.0.1:port`.
    public static func open(port: Int) async throws -> RawConnection {
        let (inbound, continuation) = AsyncStream.makeStream(of: Result<ByteBuffer, any Error>.self)
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.allowRemoteHalfClosure, value: true)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(Collector(continuation)) }
            }
            .connect(host: "127.0.0.1", port: port)
            .get()
        return RawConnection(channel: channel, inbound: inbound)
    }

    /// Sends `text` on a new connection and returns everything the server sends until it closes it.
    public static func exchange(port: Int, _ text: String) async throws -> String {
        let connection = try await open(port: port)
        try await connection.send(text)
        return try await connection.readUntilClosed()
    }

    /// Sends `text` as it is.
    public func send(_ text: String) async throws {
        try await channel.writeAndFlush(ByteBuffer(string: text))
    }

    /// Sends `bytes` as they are.
    public func send(bytes: [UInt8]) async throws {
        try await channel.writeAndFlush(ByteBuffer(bytes: bytes))
    }

    /// Sends `text`, then closes the sending side (the server reads end-of-file after it).
    public func sendAndFinish(_ text: String) async throws {
        try await send(text)
        try await channel.close(mode: .output)
    }

    /// Everything the server sends until it closes the connection.
    public func readUntilClosed() async throws -> String {
        var received = ""
        // A reset still counts as closed.
        for await case .success(let buffer) in inbound { received += String(buffer: buffer) }
        return received
    }

    /// The bytes of the first answer: reads until a full head and `Content-Length` body have arrived.
    public func readResponse() async throws -> String {
        var received = ""
        for await result in inbound {
            received += String(buffer: try result.get())
            if let headEnd = received.range(of: "\r\n\r\n") {
                let head = received[..<headEnd.lowerBound].lowercased()
                let length =
                    head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                if received.utf8.count - received[..<headEnd.upperBound].utf8.count >= length { return received }
            }
        }
        return received
    }

    /// The bytes received until `complete` says they are enough (or the connection closed).
    public func readBytes(until complete: ([UInt8]) -> Bool) async throws -> [UInt8] {
        var received: [UInt8] = []
        for await result in inbound {
            received += Array(buffer: try result.get())
            if complete(received) { return received }
        }
        return received
    }

    /// Closes the connection.
    public func close() async {
        try? await channel.close()
    }
}
