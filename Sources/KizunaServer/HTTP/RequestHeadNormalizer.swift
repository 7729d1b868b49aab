import NIOCore
import NIOHTTP1

/// What a request head says that Hummingbird does not act on, acted on right after the HTTP/1 decoder, where the
/// request still has its version.
///
/// - **Connections that do not stay open.** Past the decoder a request no longer has a version (`HTTPTypes` has
///   none), and Hummingbird closes a connection after an answer only when the request says `Connection: close` in
///   those exact words. So an HTTP/1.0 request without `keep-alive` (ApacheBench, HAProxy's default health check)
///   kept its connection open until the idle timeout, and so did `Connection: Close`. NIO's verdict on the head
///   (`isKeepAlive`, which knows both versions' rules) is written as that header; ``EdgeMiddleware`` then says
///   `Connection: close` in the answer.
/// - **`Expect: 100-continue`** is answered with `100 Continue` as the request arrives, so a client that waits for it
///   before sending a large body — curl does for bodies over 1 MiB, for a second by default — sends at once. The
///   handler then reads the body, or answers first and the rest is discarded, as for any request. (Hummingbird leaves
///   the expectation unanswered.) Other expectations pass through untouched, as RFC 9110 allows, and so does an
///   HTTP/1.0 request's, as it requires.
///
/// It leaves the pipeline with a request asking for an upgrade (a WebSocket): if the upgrade happens, what follows is
/// no longer HTTP, and NIO hands the bytes after the request on as they are.
final class RequestHeadNormalizer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data) else { return context.fireChannelRead(data) }
        if head.headers.contains(name: "upgrade") {
            context.fireChannelRead(data)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            return
        }
        let closes = !head.isKeepAlive && head.headers["connection"] != ["close"]
        // RFC 9110 §10.1.1: an HTTP/1.0 request's expectation is ignored.
        let expectsContinue = head.version != .http1_0 && head.headers["expect"].contains { $0.lowercased() == "100-continue" }
        guard closes || expectsContinue else { return context.fireChannelRead(data) }
        if closes { head.headers.replaceOrAdd(name: "connection", value: "close") }
        if expectsContinue {
            head.headers.remove(name: "expect")
            context.writeAndFlush(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .continue))), promise: nil)
        }
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }
}
