import NIOCore
import NIOHTTP1

/// Gives a request that does not keep its connection alive the `Connection: close` Hummingbird looks for.
///
/// Past the HTTP/1 decoder a request no longer has a version (`HTTPTypes` has none), and Hummingbird closes a
/// connection after an answer only when the request says `Connection: close` in those exact words. So an HTTP/1.0
/// request without `keep-alive` (ApacheBench, HAProxy's default health check) kept its connection open until the idle
/// timeout, and so did `Connection: Close`. This handler sits right after the decoder, reads NIO's verdict on the
/// request head (`isKeepAlive`, which knows both versions' rules) and writes it as the header; ``EdgeMiddleware``
/// then says `Connection: close` in the answer.
///
/// It leaves the pipeline with a request asking for an upgrade (a WebSocket): if the upgrade happens, what follows is
/// no longer HTTP, and NIO hands the bytes after the request on as they are.
final class KeepAliveNormalizer: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias InboundOut = HTTPServerRequestPart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(var head) = unwrapInboundIn(data) else { return context.fireChannelRead(data) }
        if head.headers.contains(name: "upgrade") {
            context.fireChannelRead(data)
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        } else if !head.isKeepAlive, head.headers["connection"] != ["close"] {
            head.headers.replaceOrAdd(name: "connection", value: "close")
            context.fireChannelRead(wrapInboundOut(.head(head)))
        } else {
            context.fireChannelRead(data)
        }
    }
}
