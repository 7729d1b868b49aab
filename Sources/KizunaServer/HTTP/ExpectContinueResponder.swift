import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Answers `Expect: 100-continue` with `100 Continue` as the request arrives, so a client that waits for it before
/// sending a large body — curl does for bodies over 1 MiB, for a second by default — sends at once. The handler then
/// reads the body, or answers first and the rest is discarded, as for any request. (Hummingbird leaves the
/// expectation unanswered.) Other expectations pass through untouched; RFC 9110 lets a server ignore them.
final class ExpectContinueResponder: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundOut = HTTPResponsePart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .head(var request) = unwrapInboundIn(data), request.headerFields[.expect]?.lowercased() == "100-continue" {
            request.headerFields[.expect] = nil
            context.writeAndFlush(wrapOutboundOut(.head(HTTPResponse(status: .continue))), promise: nil)
            context.fireChannelRead(wrapInboundOut(.head(request)))
        } else {
            context.fireChannelRead(data)
        }
    }
}
