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
/// - **An upgrade to anything but a WebSocket** (`h2c`) is dropped from the head and the request answered in HTTP/1.1,
///   as RFC 9110 §7.8 allows, with `Connection: close`: the upgrade handler behind closed such a connection without
///   an answer.
///
/// It leaves the pipeline with a request asking for a WebSocket: if the upgrade happens, what follows is no longer
/// HTTP, and NIO hands the bytes after the request on as they are. (Hummingbird answers a refused one 400 and closes.)
final class KeepAliveNormalizer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data) else { return context.fireChannelRead(data) }
        let upgrades = head.headers["upgrade"]
        if upgrades.contains(where: { $0.lowercased().contains("websocket") }) {
            context.fireChannelRead(data)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
            return
        }
        // An ignored upgrade closes too: NIO's decoder has taken the request for an upgrade and parses nothing after it.
        let ignoredUpgrade = !upgrades.isEmpty
        let closes = (ignoredUpgrade || !head.isKeepAlive) && head.headers["connection"] != ["close"]
        let ignoredExpectation = head.version == .http1_0 && head.headers.contains(name: "expect")
        guard closes || ignoredUpgrade || ignoredExpectation else { return context.fireChannelRead(data) }
        if ignoredUpgrade {
            head.headers.remove(name: "upgrade")
            head.headers.remove(name: "http2-settings")
        }
        if closes { head.headers.replaceOrAdd(name: "connection", value: "close") }
        if ignoredExpectation { head.headers.remove(name: "expect") }
        context.fireChannelRead(wrapInboundOut(.head(head)))
    }
}
