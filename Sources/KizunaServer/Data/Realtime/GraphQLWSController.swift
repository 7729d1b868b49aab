import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdWebSocket
import KizunaCore
import NIOCore
import NIOWebSocket

/// The request context of WebSocket upgrades: hummingbird-websocket's basic one, and the connection's channel, which
/// ``GraphQLWSFrameWriter`` writes to.
struct WebSocketUpgradeContext: RequestContext, WebSocketRequestContext {
    var coreContext: CoreRequestContextStorage
    let webSocket: WebSocketHandlerReference<Self>
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        webSocket = .init()
        channel = source.channel
    }
}

/// `GET /v1/apps/{app}/graphql` upgraded to a WebSocket: the data API over `graphql-transport-ws`, for subscriptions
/// (and queries and mutations, answered once).
///
/// The upgrade is refused for an app that does not exist (hummingbird-websocket answers every refused upgrade with
/// `400`). A client that does not offer the `graphql-transport-ws` subprotocol is upgraded without one and closed at
/// once with 4406 (``GraphQLWSCloseCode/subprotocolNotAcceptable``), as graphql-ws's own server does: a close code
/// says why, where a refused handshake would only say that it failed.
struct GraphQLWSController: Sendable {
    /// The subprotocol of the GraphQL over WebSocket protocol.
    static let subprotocol = "graphql-transport-ws"

    let services: GraphQLWSConnection.Services

    func addRoutes(to router: Router<WebSocketUpgradeContext>) {
        router.ws("/v1/apps/{app}/graphql") { request, context in
            try await shouldUpgrade(request, context: context)
        } onUpgrade: { inbound, outbound, context in
            try await serve(inbound, outbound, context: context)
        }
    }

    /// Upgrades a request for an app that exists, answering the subprotocol when the client offered it.
    func shouldUpgrade(_ request: Request, context: WebSocketUpgradeContext) async throws -> RouterShouldUpgrade {
        let app = try context.parameters.path("app")
        do {
            _ = try await services.schemas.runtime(app)
        } catch {
            return .dontUpgrade
        }
        guard Self.offersSubprotocol(request.headers) else { return .upgrade([:]) }
        return .upgrade([.secWebSocketProtocol: Self.subprotocol])
    }

    func serve(
        _ inbound: WebSocketInboundStream, _ outbound: WebSocketOutboundWriter, context: WebSocketRouterContext<WebSocketUpgradeContext>
    ) async throws {
        guard Self.offersSubprotocol(context.request.headers) else {
            let code = GraphQLWSCloseCode.subprotocolNotAcceptable
            try await outbound.close(WebSocketErrorCode(codeNumber: Int(code.rawValue)), reason: code.defaultReason)
            return
        }
        let app = try context.requestContext.parameters.path("app")
        let writer = GraphQLWSFrameWriter(channel: context.requestContext.channel)
        await GraphQLWSConnection(app: app, services: services, outbound: outbound, writer: writer, logger: context.logger).run(inbound)
    }

    /// Whether the handshake's `Sec-WebSocket-Protocol` (a comma-separated list, possibly over several lines) names
    /// `graphql-transport-ws`.
    static func offersSubprotocol(_ headers: HTTPFields) -> Bool {
        headers[values: .secWebSocketProtocol].contains { line in
            line.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == subprotocol }
        }
    }
}
