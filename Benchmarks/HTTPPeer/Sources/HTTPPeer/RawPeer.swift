import NIOCore
import NIOPosix

// http-peer PORT DIRECTORY --raw: the same answers from SwiftNIO alone, with no HTTP library: each request's end is
// found by scanning for the blank line and reading `Content-Length`, and the answer is the whole response's bytes,
// built at start. What any server on SwiftNIO pays before it parses HTTP — the floor under Hummingbird and Kizuna
// (Benchmarks/device-endpoints.sh runs it as the "nio" peer). Not a server: no chunked bodies, no validation.

/// The whole HTTP/1.1 response for each path, and the 404 for any other.
struct RawAnswers: Sendable {
    let byPath: [String: ByteBuffer]
    let missing: ByteBuffer

    init(files: [String: ByteBuffer]) {
        func response(_ status: String, _ body: ByteBuffer) -> ByteBuffer {
            var bytes = ByteBuffer(
                string: "HTTP/1.1 \(status)\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: \(body.readableBytes)\r\n\r\n")
            bytes.writeImmutableBuffer(body)
            return bytes
        }
        byPath = files.mapValues { response("200 OK", $0) }
        missing = response("404 Not Found", ByteBuffer())
    }
}

final class RawHTTPHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let answers: RawAnswers
    private var pending: ByteBuffer?

    init(answers: RawAnswers) { self.answers = answers }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var bytes = unwrapInboundIn(data)
        if var held = pending {
            held.writeBuffer(&bytes)
            bytes = held
        }
        while let (path, length) = Self.request(in: bytes) {
            bytes.moveReaderIndex(forwardBy: length)
            context.write(wrapOutboundOut(answers.byPath[path] ?? answers.missing), promise: nil)
        }
        pending = bytes.readableBytes > 0 ? bytes : nil
    }

    func channelReadComplete(context: ChannelHandlerContext) { context.flush() }

    /// The path and whole length of the request at the front of `bytes`, once all of it has arrived.
    static func request(in bytes: ByteBuffer) -> (String, Int)? {
        bytes.withUnsafeReadableBytes { raw -> (String, Int)? in
            let view = raw.bindMemory(to: UInt8.self)
            let cr = UInt8(ascii: "\r"), lf = UInt8(ascii: "\n")
            guard view.count >= 4 else { return nil }
            var end = 0
            while end + 3 < view.count, !(view[end] == cr && view[end + 1] == lf && view[end + 2] == cr && view[end + 3] == lf) { end += 1 }
            guard end + 3 < view.count else { return nil }
            let head = String(decoding: UnsafeBufferPointer(rebasing: view[..<end]), as: UTF8.self)
            let lines = head.split(separator: "\r\n")
            let parts = lines.first?.split(separator: " ") ?? []
            guard parts.count >= 2 else { return nil }
            var length = 0
            for line in lines.dropFirst() where line.lowercased().hasPrefix("content-length:") {
                length = Int(line.dropFirst(15).trimmingCharacters(in: .whitespaces)) ?? 0
            }
            let total = end + 4 + length
            return total <= view.count ? (String(parts[1]), total) : nil
        }
    }
}

func serveRaw(port: Int, files: [String: ByteBuffer]) async throws {
    let answers = RawAnswers(files: files)
    let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
        .serverChannelOption(.backlog, value: 1024)
        .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
        .childChannelOption(.socketOption(.tcp_nodelay), value: 1)
        .childChannelInitializer { channel in
            channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(RawHTTPHandler(answers: answers)) }
        }
        .bind(host: "127.0.0.1", port: port).get()
    try await channel.closeFuture.get()
}
