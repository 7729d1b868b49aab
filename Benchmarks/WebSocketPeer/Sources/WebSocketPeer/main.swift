import Hummingbird
import HummingbirdWebSocket

// websocket-peer PORT: GET /ws upgrades (answering the graphql-transport-ws subprotocol when offered) and echoes each
// text message until the client closes. Each connection is held by Hummingbird's own task and WebSocket handler only.
let port = CommandLine.arguments.dropFirst().first.flatMap { Int($0) } ?? 18099
let router = Router(context: BasicWebSocketRequestContext.self)
router.ws("/ws") { request, _ in
    request.headers[.secWebSocketProtocol] == nil ? .upgrade([:]) : .upgrade([.secWebSocketProtocol: "graphql-transport-ws"])
} onUpgrade: { inbound, outbound, _ in
    for try await message in inbound.messages(maxSize: 1 << 20) {
        if case .text(let text) = message { try await outbound.write(.text(text)) }
    }
}
let app = Application(
    router: Router(),
    server: .http1WebSocketUpgrade(webSocketRouter: router, configuration: .init(autoPing: .disabled)),
    configuration: .init(address: .hostname("127.0.0.1", port: port))
)
try await app.runService()
