import Foundation
import HTTPTypes
import KizunaCore
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTPTypes

/// Answers a request the HTTP parser refuses outright — a bad method, a header past the size limit, garbage instead
/// of HTTP — with the standard JSON error (`400 bad_request`, a request id) and closes the connection, where
/// Hummingbird alone would send an empty 400.
///
/// It sits in each connection's pipeline after the HTTP codec. A parse error while a request is being handled (its
/// body broke off, say) is left to pass: the handler's body read fails and ``ErrorResponder`` answers it.
final class ParserErrorResponder: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    private let logger: Logger
    /// Requests whose answer has not been written to its end.
    private var requestsInFlight = 0
    /// A request whose body is still arriving (its answer may already be written: an early 413, say).
    private var bodyOpen = false
    private var answered = false

    init(logger: Logger) {
        self.logger = logger
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            requestsInFlight += 1
            bodyOpen = true
        case .end: bodyOpen = false
        case .body: break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) { requestsInFlight = max(0, requestsInFlight - 1) }
        context.write(data, promise: promise)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard let error = error as? HTTPParserError else { return context.fireErrorCaught(error) }
        Self.handle(error, context: context, inFlight: requestsInFlight, bodyOpen: bodyOpen, answered: &answered, logger: logger)
    }

    /// What a parse error comes to, given the connection's state: passed on while a request is being answered (its
    /// handler's body read fails and answers it), the connection closed when the request was answered and its body
    /// broke off afterwards, otherwise the standard JSON error and the connection closed once it is written. Shared
    /// with ``ConnectionState``, which takes this handler's place where the device lanes run.
    static func handle(
        _ error: HTTPParserError, context: ChannelHandlerContext, inFlight: Int, bodyOpen: Bool, answered: inout Bool, logger: Logger
    ) {
        if inFlight > 0 { return context.fireErrorCaught(error) }
        guard !bodyOpen, !answered else {
            // The request was answered already and its body broke off afterwards: nothing more to say.
            context.close(promise: nil)
            return
        }
        answered = true
        let (id, body) = refusal(error, logger: logger)
        let head = HTTPResponse(
            status: .badRequest,
            headerFields: [
                .contentType: "application/json; charset=utf-8", .contentLength: String(body.count), .connection: "close",
                .requestID: id,
            ])
        context.write(NIOAny(HTTPResponsePart.head(head)), promise: nil)
        context.write(NIOAny(HTTPResponsePart.body(ByteBuffer(bytes: body))), promise: nil)
        // Closed once the answer is written: closing at once could drop it while the socket is busy.
        let bound = NIOLoopBound(context, eventLoop: context.eventLoop)
        context.writeAndFlush(NIOAny(HTTPResponsePart.end(nil))).whenComplete { _ in bound.value.close(promise: nil) }
    }

    /// What a request the parser refused is answered: a new request id (logged with the error) and the standard JSON
    /// error, `bad_request` with what was wrong.
    static func refusal(_ error: HTTPParserError, logger: Logger) -> (id: String, body: Data) {
        let id = hex(randomBytes(8))
        logger.info("HTTP request refused by the parser", metadata: ["error": "\(error)", "request.id": "\(id)"])
        let message =
            switch error {
            case .headerOverflow: "The request header is too large."
            case .invalidMethod: "The request method is not valid."
            default: "The request is not valid HTTP."
            }
        return (id, (try? JSONEncoder().encode(ErrorEnvelope(KizunaError(.badRequest, message)))) ?? Data())
    }
}

@available(*, unavailable)
extension ParserErrorResponder: Sendable {}
