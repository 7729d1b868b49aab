// swift-tools-version:6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "kizuna",
    platforms: [.macOS(.v14), .iOS(.v17), .tvOS(.v17), .watchOS(.v10), .visionOS(.v1)],
    products: [
        .executable(name: "kizuna", targets: ["kizuna"]),
        .library(name: "KizunaCore", targets: ["KizunaCore"]),
        .library(name: "KizunaServer", targets: ["KizunaServer"]),
        .library(name: "KizunaClient", targets: ["KizunaClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        // Provisioning profiles (CMS signed data, BER) in `release inspect`; in tests, the local APNs server's certificate.
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-atomics.git", from: "1.2.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.10.0"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.1.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.0.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.3.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.5.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.20.0"),
        // The APNs sender (and the tests' local APNs): HTTP/2 over TLS.
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.30.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.29.0"),
        .package(url: "https://github.com/GraphQLSwift/GraphQL.git", from: "4.3.0"),
        // The SDK's local store (the outbox, the offline cache): SQLite as iOS teams use it. The system's SQLite on
        // Linux (libsqlite3-dev), the OS's on Apple platforms.
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        // The SDK's WebSocket client on Linux, where FoundationNetworking has no URLSessionWebSocketTask.
        .package(url: "https://github.com/hummingbird-project/swift-websocket.git", from: "1.6.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.1.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
        // Child processes without Foundation's Process: `unzip` for `release inspect`; in tests, the kizuna binary and
        // the Python outside clients.
        .package(url: "https://github.com/swiftlang/swift-subprocess.git", from: "1.0.2"),
        .package(url: "https://github.com/vapor/async-kit.git", from: "1.20.0"),
        // APNs provider tokens: ES256 JWTs.
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.7.1"),
        .package(url: "https://github.com/vapor/postgres-kit.git", from: "2.14.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.25.0"),
        .package(url: "https://github.com/vapor/sql-kit.git", from: "3.32.0"),
        .package(url: "https://github.com/vapor/sqlite-kit.git", from: "4.5.0"),
    ],
    targets: [
        .target(
            name: "KizunaCore",
            // SwiftASN1 costs the SDK nothing new: KizunaClient's CryptoExtras already links it.
            dependencies: [.product(name: "Crypto", package: "swift-crypto"), .product(name: "SwiftASN1", package: "swift-asn1")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "KizunaServer",
            dependencies: [
                "KizunaCore",
                .product(name: "AsyncKit", package: "async-kit"),
                .product(name: "Atomics", package: "swift-atomics"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "GraphQL", package: "GraphQL"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "OrderedCollections", package: "swift-collections"),
                .product(name: "PostgresKit", package: "postgres-kit"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "SQLiteKit", package: "sqlite-kit"),
            ],
            resources: [.copy("Resources/openapi.yaml")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "KizunaClient",
            dependencies: [
                "KizunaCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "GRDB", package: "GRDB.swift"),
                // Linux only: Apple platforms use URLSessionWebSocketTask.
                .product(name: "WSClient", package: "swift-websocket", condition: .when(platforms: [.linux])),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(platforms: [.linux])),
                .product(name: "Logging", package: "swift-log", condition: .when(platforms: [.linux])),
                .product(name: "NIOWebSocket", package: "swift-nio", condition: .when(platforms: [.linux])),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "kizuna",
            dependencies: [
                "KizunaClient",
                "KizunaCore",
                "KizunaServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CryptoExtras", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "Subprocess", package: "swift-subprocess"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            swiftSettings: swiftSettings
        ),
        // The chat schema's Swift, as `kizuna codegen swift --schema Examples/Chat/schema.graphql` writes it (CodegenTests
        // regenerates and compares it): built here, so generated code is proven to compile; kizuna-chat and the SDK tests use it.
        .target(
            name: "ChatAPI",
            dependencies: ["KizunaClient", "KizunaCore"],
            path: "Examples/Chat/Generated",
            swiftSettings: swiftSettings
        ),
        // The TV schedule schema's Swift, likewise (its `Genre` proves generated enums compile).
        .target(
            name: "TVScheduleAPI",
            dependencies: ["KizunaClient", "KizunaCore"],
            path: "Examples/TVSchedule/Generated",
            swiftSettings: swiftSettings
        ),
        // Names that test the Swift generator (Tests/CodegenFixture/schema.graphql), generated and built likewise.
        .target(
            name: "CodegenFixture",
            dependencies: ["KizunaClient", "KizunaCore"],
            path: "Tests/CodegenFixture/Generated",
            swiftSettings: swiftSettings
        ),
        // The chat example's client (Examples/Chat): the SDK from a command line, two people in two terminals.
        .executableTarget(
            name: "kizuna-chat",
            dependencies: ["ChatAPI", "KizunaClient", "KizunaCore", .product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Examples/Chat/Sources",
            swiftSettings: swiftSettings
        ),
        // The tests' local APNs as a process, for Benchmarks/push.sh (kizuna and aioapns send to it in turn).
        .executableTarget(
            name: "kizuna-apns-local",
            dependencies: ["KizunaTestSupport", .product(name: "Crypto", package: "swift-crypto")],
            path: "Benchmarks/APNsLocal",
            swiftSettings: swiftSettings
        ),
        // What several test targets share: a TCP proxy that takes a peer away and gives it back, a local APNs, and a
        // log handler that records.
        .target(
            name: "KizunaTestSupport",
            dependencies: [
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHPACK", package: "swift-nio-http2"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            path: "Tests/Support",
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "KizunaCoreTests", dependencies: ["KizunaCore", "KizunaTestSupport"], swiftSettings: swiftSettings),
        .testTarget(
            name: "KizunaServerTests",
            dependencies: [
                "KizunaCore",
                "KizunaServer",
                "KizunaTestSupport",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "GraphQL", package: "GraphQL"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "Subprocess", package: "swift-subprocess"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "KizunaClientTests",
            dependencies: [
                "ChatAPI",
                "TVScheduleAPI",
                "CodegenFixture",
                "KizunaClient",
                "KizunaCore",
                "KizunaServer",
                "KizunaTestSupport",
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "SQLKit", package: "sql-kit"),
            ],
            swiftSettings: swiftSettings
        ),
        // The ```swift blocks of README.md and the DocC articles, compiled as written (SnippetSyncTests keeps them in
        // step with the docs): the SDK's against KizunaClient alone, the server's against KizunaServer and Hummingbird,
        // whose `runService()` the server's getting-started calls.
        .testTarget(name: "KizunaSnippetTests", dependencies: ["ChatAPI", "KizunaClient"], swiftSettings: swiftSettings),
        .testTarget(
            name: "KizunaServerSnippetTests",
            dependencies: ["KizunaServer", .product(name: "Hummingbird", package: "hummingbird")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "kizunaTests",
            dependencies: [
                "kizuna",
                "kizuna-chat",
                "KizunaTestSupport",
                "KizunaClient",
                "KizunaCore",
                "KizunaServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "Subprocess", package: "swift-subprocess"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
