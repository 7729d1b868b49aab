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
            await connection(outbound, context: context).run(inbound, refusing: Self.refusal(context.request.headers))
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

    /// The connection an upgraded request opened, made synchronously: the task serving it lives as long as the socket
    /// and keeps the memory of its deepest call, so the route's closure makes no async call but
    /// ``GraphQLWSConnection/run(_:refusing:)``.
    @inline(never)  // its temporaries (the request's copies) stay on the thread's stack, out of the task's frames
    func connection(_ outbound: WebSocketOutboundWriter, context: WebSocketRouterContext<WebSocketUpgradeContext>) -> GraphQLWSConnection {
        GraphQLWSConnection(
            app: (try? context.requestContext.parameters.path("app")) ?? "", services: services, outbound: outbound,
            writer: GraphQLWSFrameWriter(channel: context.requestContext.channel))
    }

    /// What the connection closes with at once: 4406 when the client did not offer `graphql-transport-ws`.
    @inline(never)
    static func refusal(_ headers: HTTPFields) -> GraphQLWSCloseCode? {
        offersSubprotocol(headers) ? nil : .subprotocolNotAcceptable
    }

    /// Whether the handshake's `Sec-WebSocket-Protocol` (a comma-separated list, possibly over several lines) names
    /// `graphql-transport-ws`.
    static func offersSubprotocol(_ headers: HTTPFields) -> Bool {
        headers[values: .secWebSocketProtocol].contains { line in
            line.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == subprotocol }
        }
    }
}
