import Foundation
import KizunaCore
import NIOCore
import NIOHPACK
import NIOHTTP2
import NIOPosix
import NIOSSL
import Synchronization

/// One long-lived HTTP/2 connection to an APNs host, over TLS (ALPN `h2`), multiplexing every notification as a
/// stream of its own: a HEADERS frame and the payload in one DATA frame out, the answer's HEADERS (and a DATA frame
/// with the reason for an error) back. Opened when first needed, and again after it closes (an idle timeout, a
/// GOAWAY, a reset); streams beyond the server's concurrency limit wait in swift-nio-http2's buffer.
///
/// Built on swift-nio-http2 directly: measured against async-http-client's HTTP/2 (Benchmarks/push.sh), its
/// per-request work is a fraction, which is most of what a sender spends.
final class APNsConnection: Sendable {
    /// An answer: the status, the headers and the body.
    struct Answer: Sendable {
        let status: Int
        let headers: HPACKHeaders
        let body: ByteBuffer
    }

    private enum State {
        case idle
        case connecting(EventLoopFuture<(any Channel, NIOHTTP2Handler.StreamMultiplexer)>)
        case ready(any Channel, NIOHTTP2Handler.StreamMultiplexer)
        case shutDown
    }

    let host: String
    let port: Int
    private let tls: NIOSSLContext
    private let state = Mutex<State>(.idle)

    init(url: String, tls: NIOSSLContext) throws(KizunaError) {
        guard let components = URLComponents(string: url), components.scheme == "https", let host = components.host, !host.isEmpty else {
            throw KizunaError(.validationFailed, "The APNs URL must be https://host[:port], got '\(url)'.", field: "apnsURL")
        }
        self.host = host
        port = components.port ?? 443
        self.tls = tls
    }

    /// Sends each request on a stream of its own, all in one turn of the connection's event loop, and tells
    /// `answered` each one's answer or failure as it comes (a request gets no answer after `timeout`). Returns once
    /// the requests are written.
    /// - Throws: Only when no connection can be opened (then nothing is told).
    func send(
        _ requests: [(headers: HPACKHeaders, body: ByteBuffer)], timeout: TimeAmount = .seconds(30),
        answered: @escaping @Sendable (Int, Result<Answer, any Error>) -> Void
    ) async throws {
        let (channel, multiplexer) = try await connection()
        let loop = channel.eventLoop
        try await loop.submit {
            for (index, request) in requests.enumerated() {
                let promise = loop.makePromise(of: Answer.self)
                promise.futureResult.whenComplete { answered(index, $0) }
                multiplexer.createStreamChannel(promise: nil) { stream in
                    stream.eventLoop.makeCompletedFuture {
                        try stream.pipeline.syncOperations.addHandler(
                            StreamHandler(headers: request.headers, body: request.body, answer: promise, timeout: timeout))
                    }
                }
            }
        }.get()
    }

    /// The open connection, or one being opened (shared by everyone asking meanwhile).
    private func connection() async throws -> (any Channel, NIOHTTP2Handler.StreamMultiplexer) {
        let future: EventLoopFuture<(any Channel, NIOHTTP2Handler.StreamMultiplexer)> = try state.withLock { state in
            switch state {
            case .ready(let channel, let multiplexer) where channel.isActive:
                return channel.eventLoop.makeSucceededFuture((channel, multiplexer))
            case .connecting(let future):
                return future
            case .shutDown:
                throw KizunaError(.unavailable, "The push sender is shutting down.")
            case .idle, .ready:
                let future = connect()
                state = .connecting(future)
                return future
            }
        }
        do {
            let (channel, multiplexer) = try await future.get()
            state.withLock { state in
                if case .connecting = state { state = .ready(channel, multiplexer) }
            }
            channel.closeFuture.whenComplete { _ in
                self.state.withLock { state in
                    if case .ready(let current, _) = state, current === channel { state = .idle }
                }
            }
            return (channel, multiplexer)
        } catch {
            state.withLock { state in
                if case .connecting = state { state = .idle }
            }
            throw error
        }
    }

    private func connect() -> EventLoopFuture<(any Channel, NIOHTTP2Handler.StreamMultiplexer)> {
        let (tls, host, port) = (tls, host, port)
        // SNI names a host, never an address.
        let serverName = host.allSatisfy { $0.isNumber || $0 == "." || $0 == ":" } ? nil : host
        let group = MultiThreadedEventLoopGroup.singleton
        return ClientBootstrap(group: group)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .connectTimeout(.seconds(10))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(try NIOSSLClientHandler(context: tls, serverHostname: serverName))
                    var connection = NIOHTTP2Handler.ConnectionConfiguration()
                    connection.initialSettings = [
                        HTTP2Setting(parameter: .maxConcurrentStreams, value: 100), HTTP2Setting(parameter: .initialWindowSize, value: 1 << 20),
                        HTTP2Setting(parameter: .enablePush, value: 0),
                    ]
                    var streams = NIOHTTP2Handler.StreamConfiguration()
                    streams.targetWindowSize = 1 << 20
                    _ = try channel.pipeline.syncOperations.configureHTTP2Pipeline(
                        mode: .client, connectionConfiguration: connection, streamConfiguration: streams
                    ) { stream in stream.close() }  // APNs starts no streams
                }
            }
            .connect(host: host, port: port)
            .flatMap { channel in
                channel.eventLoop.makeCompletedFuture {
                    (channel, try channel.pipeline.syncOperations.handler(type: NIOHTTP2Handler.self).syncMultiplexer())
                }
            }
    }

    /// Closes the connection; sends after this fail.
    func shutdown() async {
        let channel: (any Channel)? = state.withLock { state in
            defer { state = .shutDown }
            if case .ready(let channel, _) = state { return channel }
            return nil
        }
        try? await channel?.close()
    }
}

/// One notification's stream: writes the request when the stream opens, collects the answer, fails on a reset, a
/// closed connection or the timeout.
private final class StreamHandler: ChannelInboundHandler {
    typealias InboundIn = HTTP2Frame.FramePayload
    typealias OutboundOut = HTTP2Frame.FramePayload

    private let headers: HPACKHeaders
    private let body: ByteBuffer
    private let answer: EventLoopPromise<APNsConnection.Answer>
    private let timeout: TimeAmount
    private var status: Int?
    private var responseHeaders = HPACKHeaders()
    private var responseBody = ByteBuffer()
    private var done = false
    private var timer: Scheduled<Void>?

    init(headers: HPACKHeaders, body: ByteBuffer, answer: EventLoopPromise<APNsConnection.Answer>, timeout: TimeAmount) {
        self.headers = headers
        self.body = body
        self.answer = answer
        self.timeout = timeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        let stream = context.channel
        let (promise, seconds) = (answer, timeout.nanoseconds / 1_000_000_000)
        timer = context.eventLoop.scheduleTask(in: timeout) {
            promise.fail(KizunaError(.timeout, "APNs did not answer within \(seconds) s."))
            stream.close(promise: nil)
        }
        if context.channel.isActive { write(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        write(context)
        context.fireChannelActive()
    }

    private var written = false

    private func write(_ context: ChannelHandlerContext) {
        guard !written else { return }
        written = true
        context.write(wrapOutboundOut(.headers(.init(headers: headers))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.data(.init(data: .byteBuffer(body), endStream: true))), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let ended: Bool
        switch unwrapInboundIn(data) {
        case .headers(let frame):
            if status == nil, let text = frame.headers.first(name: ":status"), let code = Int(text) {
                status = code
                responseHeaders = frame.headers
            }
            ended = frame.endStream
        case .data(let frame):
            if case .byteBuffer(var chunk) = frame.data { responseBody.writeBuffer(&chunk) }
            ended = frame.endStream
        default:
            return
        }
        if ended { finish(context) }
    }

    private func finish(_ context: ChannelHandlerContext) {
        guard !done else { return }
        done = true
        timer?.cancel()
        if let status {
            answer.succeed(.init(status: status, headers: responseHeaders, body: responseBody))
        } else {
            answer.fail(ChannelError.inappropriateOperationForState)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if !done {
            done = true
            timer?.cancel()
            answer.fail(ChannelError.ioOnClosedChannel)
        }
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if !done {
            done = true
            timer?.cancel()
            answer.fail(error)
        }
        context.close(promise: nil)
    }
}
