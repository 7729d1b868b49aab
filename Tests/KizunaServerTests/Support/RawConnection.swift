import Foundation
import NIOCore
import NIOPosix

/// A plain TCP connection to a test server, for what an HTTP client will not send: half a header, broken chunked
/// framing, a body cut short.
final class RawConnection: Sendable {
    private let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>

    private init(channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>) {
        self.channel = channel
    }

    deinit {
        // NIOAsyncChannel insists its writer is finished before it goes.
        channel.outbound.finish()
        channel.channel.close(promise: nil)
    }

    /// Connects to `127.0.0.1:port`.
    static func open(port: Int) async throws -> RawConnection {
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .channelOption(.allowRemoteHalfClosure, value: true)
            .connect(host: "127.0.0.1", port: port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(
                        wrappingChannelSynchronously: channel, configuration: .init(isOutboundHalfClosureEnabled: true))
                }
            }
        return RawConnection(channel: channel)
    }

    /// Sends `text` as it is.
    func send(_ text: String) async throws {
        try await channel.outbound.write(ByteBuffer(string: text))
    }

    /// Sends `text`, then closes the sending side (the server reads end-of-file after it).
    func sendAndFinish(_ text: String) async throws {
        try await send(text)
        channel.outbound.finish()
    }

    /// Everything the server sends until it closes the connection.
    func readUntilClosed() async throws -> String {
        var received = ""
        do {
            for try await buffer in channel.inbound { received += String(buffer: buffer) }
        } catch is ChannelError {
            // A reset still counts as closed.
        } catch is IOError {
        }
        return received
    }

    /// The bytes of the first answer: reads until a full head and `Content-Length` body have arrived.
    func readResponse() async throws -> String {
        var received = ""
        for try await buffer in channel.inbound {
            received += String(buffer: buffer)
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

    /// Closes the connection.
    func close() async {
        channel.outbound.finish()
        try? await channel.channel.close()
    }
}
