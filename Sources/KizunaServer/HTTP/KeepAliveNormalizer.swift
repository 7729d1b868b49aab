import NIOCore
import NIOHTTP1

/// What a request's HTTP version decides, written where Hummingbird looks: right after the HTTP/1 decoder, the last
/// place a request still has a version (`HTTPTypes` has none).
///
/// - **Connections that do not stay open.** Hummingbird closes a connection after an answer only when the request
///   says `Connection: close` in those exact words. So an HTTP/1.0 request without `keep-alive` (ApacheBench,
///   HAProxy's default health check) kept its connection open until the idle timeout, and so did `Connection: Close`.
///   NIO's verdict on the head (`isKeepAlive`, which knows both versions' rules) is written as that header;
///   ``EdgeMiddleware`` then says `Connection: close` in the answer.
/// - **An HTTP/1.0 request's `Expect`** is dropped, as RFC 9110 §10.1.1 requires, so ``ExpectContinueResponder``
///   never sends it a `100 Continue`.
///
/// It leaves the pipeline with a request asking for an upgrade (a WebSocket): if the upgrade happens, what follows is
/// no longer HTTP, and NIO hands the bytes after the request on as they are. (A refused upgrade leaves the rest of
/// that connection without it, as every connection was before it existed.)
final class KeepAliveNormalizer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data) else { return context.fireChannelRead(data) }
        if head.headers.contains(name: "upgrade") {
            context.fireChannelRead(data)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            return
        }
        let closes = !head.isKeepAlive && head.headers["connection"] != ["close"]
        let ignoredExpectation = head.version == .http1_0 && head.headers.contains(name: "expect")
        guard closes || ignoredExpectation else { return context.fireChannelRead(data) }
        if closes { head.headers.replaceOrAdd(name: "connection", value: "close") }
        if ignoredExpectation { head.headers.remove(name: "expect") }
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }
}
