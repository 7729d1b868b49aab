import Dispatch
import HTTPTypes
import Hummingbird
import NIOCore

/// `config:fetch` and `gate:check` answered from a connection's bytes, in front of NIO's HTTP parser.
///
/// ``DeviceFastLane`` answers behind the parser, but on this machine NIO alone serves the same bytes at nginx's speed
/// while the HTTP/1 stack above the socket (the parser, the conversion to HTTP types, the handlers between) cost two to
/// three times what the answer does (Benchmarks/RESULTS.md, issue 19). This lane sits right behind the connection
/// limiter and the flush coalescer and reads each request's head itself (``RawRequestHead``): a whole device request
/// it may answer is answered with the bytes of the same answer the route gives (``DeviceFastLane/headers(of:id:)``,
/// the same request log line and metrics); every other request is passed to the parser whole, and the parser never
/// knows the lane is there.
///
/// What keeps it honest:
/// - **Order.** It answers only when every request it passed on has been answered (``ConnectionState`` tells it of
///   each answer's end), so answers never overtake each other; behind a passed request it passes device requests on
///   too, where ``DeviceFastLane`` may still answer them.
/// - **The connection's first request** always goes to the parser: Hummingbird puts its HTTP handlers in place then
///   (or upgrades to a WebSocket), and the lane answers only once ``ConnectionState`` is linked to it.
/// - **Anything it does not read with certainty** (see ``RawRequestHead/Scan/unframed``: chunked bodies, upgrades,
///   `Expect`, `Connection: close`, HTTP/1.0, a head over 8 KiB or 100 fields) hands the connection to the parser for
///   good: the lane passes on what it holds and leaves the pipeline. So do the server's shutdown and the client's end
///   of input.
/// - **Idle and shutdown.** Its exchanges count as activity for the idle timeout (``ConnectionState/exchanged()``);
///   it never holds a request when the server quiesces, since it leaves first and hands on what it holds.
final class DeviceByteLane: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// The longest head the lane reads; a longer one goes to the parser, with the rest of the connection.
    static let maxHead = 8 << 10

    private let lane: DeviceFastLane
    /// The state handler behind the parser, linked when the connection's HTTP handlers are in place.
    private(set) var state: ConnectionState?
    /// What has arrived of a request not whole yet.
    private var held: ByteBuffer?
    /// How many bytes of a request passed on are still to come.
    private var passing = 0
    /// Requests passed on whose answers have not ended.
    private var unanswered = 0
    private var retired = false

    init(lane: DeviceFastLane) {
        self.lane = lane
    }

    /// Links `lane` and the state handler behind the parser. The links are strong and broken when either leaves the
    /// pipeline (a connection's end removes both): a weak reference gives the object it names a side table, and then
    /// every retain and release of it — NIO's, several each time it calls the handler — takes the runtime's slow path.
    static func link(_ lane: DeviceByteLane, _ state: ConnectionState) {
        lane.state = state
        state.byteLane = lane
    }

    /// Breaks the links ``link(_:_:)`` made.
    func unlink() {
        state?.byteLane = nil
        state = nil
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        unlink()
    }

    /// An answer to a request passed on has been written.
    func answerEnded() {
        unanswered = max(0, unanswered - 1)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !retired else { return context.fireChannelRead(data) }
        var bytes = unwrapInboundIn(data)
        if var front = held {
            held = nil
            front.writeBuffer(&bytes)
            bytes = front
        }
        var answered = false
        while bytes.readableBytes > 0 {
            if passing > 0 {
                let length = min(passing, bytes.readableBytes)
                passing -= length
                context.fireChannelRead(wrapInboundOut(bytes.readSlice(length: length)!))
                continue
            }
            let scan = bytes.withUnsafeReadableBytes { RawRequestHead.scan($0, maxLength: Self.maxHead) }
            guard case .head(let head) = scan else {
                if case .unframed = scan { return retire(context, handingOn: bytes) }
                held = bytes
                break
            }
            let length = head.headLength + head.contentLength
            if let device = head.device, head.contentLength <= lane.bodyLimit, unanswered == 0, state != nil, lane.readiness.isReady {
                guard bytes.readableBytes >= length else {
                    held = bytes
                    break
                }
                if answer(device, head: head, in: bytes, context: context) {
                    bytes.moveReaderIndex(forwardBy: length)
                    answered = true
                    continue
                }
            }
            unanswered += 1
            let now = min(length, bytes.readableBytes)
            passing = length - now
            context.fireChannelRead(wrapInboundOut(bytes.readSlice(length: now)!))
        }
        if answered {
            state?.exchanged()
            context.flush()
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard !retired, event is ChannelShouldQuiesceEvent || (event as? ChannelEvent) == .inputClosed else {
            return context.fireUserInboundEventTriggered(event)
        }
        retire(context, handingOn: held.take(), then: event)
    }

    /// Answers a whole device request at the front of `bytes`, or returns false to pass it on.
    private func answer(_ device: RawRequestHead.Device, head: RawRequestHead, in bytes: ByteBuffer, context: ChannelHandlerContext) -> Bool {
        let started = DispatchTime.now().uptimeNanoseconds
        let body = bytes.getSlice(at: bytes.readerIndex + head.headLength, length: head.contentLength)!
        guard let reply = lane.devices.immediateReply(device.endpoint, app: device.app, body: body, ifNoneMatch: head.ifNoneMatch)
        else { return false }
        let id = RequestID().description
        var answer = context.channel.allocator.buffer(capacity: 384 + (reply.body?.readableBytes ?? 0))
        answer.writeStaticString("HTTP/1.1 ")
        answer.writeString(String(reply.status.code))
        answer.writeStaticString(" ")
        answer.writeString(reply.status.reasonPhrase)
        answer.writeStaticString("\r\n")
        // As NIO's encoder writes them: a 304 carries no `Content-Length`.
        for field in lane.headers(of: reply, id: id) where reply.status != .notModified || field.name != .contentLength {
            answer.writeString(field.name.rawName)
            answer.writeStaticString(": ")
            answer.writeString(field.value)
            answer.writeStaticString("\r\n")
        }
        answer.writeStaticString("\r\n")
        if var content = reply.body { answer.writeBuffer(&content) }
        context.write(NIOAny(answer), promise: nil)
        lane.record(reply, endpoint: device.endpoint, path: device.path, id: id, started: started)
        lane.answeredFromBytes.add()
        return true
    }

    /// Hands `bytes` (and `event`, after them) and the rest of the connection to the parser, and leaves: a handler
    /// out of the pipeline passes nothing on.
    private func retire(_ context: ChannelHandlerContext, handingOn bytes: ByteBuffer?, then event: Any? = nil) {
        retired = true
        unlink()
        if let bytes, bytes.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(bytes)) }
        if let event { context.fireUserInboundEventTriggered(event) }
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}

@available(*, unavailable)
extension DeviceByteLane: Sendable {}
