// swift-tools-version:6.0
// The subscriptions benchmark's floor (Benchmarks/subscriptions.sh): a bare hummingbird-websocket server, the stack
// Kizuna's WebSocket runs on, holding each connection open with nothing of Kizuna's in it: what an idle connection
// costs the framework alone. Not part of the kizuna package; CI never builds it.
import PackageDescription

let package = Package(
    name: "websocket-peer",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "websocket-peer", targets: ["WebSocketPeer"])
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
    ],
    targets: [
        .executableTarget(
            name: "WebSocketPeer",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
            ]
        )
    ]
)
