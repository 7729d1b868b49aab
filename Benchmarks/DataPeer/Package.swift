// swift-tools-version:6.0
// The data API benchmark's peer (Benchmarks/data-api.sh): a minimal program that writes and reads an app's model
// table through the same drivers and pool Kizuna uses, with no HTTP, GraphQL or rules. Not part of the kizuna
// package; CI never builds it.
import PackageDescription

let package = Package(
    name: "data-peer",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "data-peer", targets: ["DataPeer"])
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/vapor/postgres-kit.git", from: "2.17.0"),
        .package(url: "https://github.com/vapor/sqlite-kit.git", from: "4.5.2"),
    ],
    targets: [
        .executableTarget(
            name: "DataPeer",
            dependencies: [
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "PostgresKit", package: "postgres-kit"),
                .product(name: "SQLiteKit", package: "sqlite-kit"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        )
    ]
)
