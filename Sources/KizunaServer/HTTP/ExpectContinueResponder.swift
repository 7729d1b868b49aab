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
        if case .head(var request) = unwrapInboundIn(data), Self.answer(&request, context: context) {
            context.fireChannelRead(wrapInboundOut(.head(request)))
        } else {
            context.fireChannelRead(data)
        }
    }

    /// Answers `request`'s `Expect: 100-continue`, if it has one, and takes the expectation off it; false when it
    /// has none. Shared with ``ConnectionState``, which takes this handler's place where the device lanes run.
    static func answer(_ request: inout HTTPRequest, context: ChannelHandlerContext) -> Bool {
        guard request.headerFields[.expect]?.lowercased() == "100-continue" else { return false }
        request.headerFields[.expect] = nil
        context.writeAndFlush(NIOAny(HTTPResponsePart.head(HTTPResponse(status: .continue))), promise: nil)
        return true
    }
}
