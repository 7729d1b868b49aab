// swift-tools-version:6.0
// The HTTP benchmarks' framework floor (Benchmarks/device-endpoints.sh and the other HTTP comparisons): a bare
// Hummingbird 2 application that answers every request on a path with the same bytes read from a file at start, with
// no middleware — what the framework alone costs for a route like Kizuna's. Not part of the kizuna package; CI never
// builds it.
import PackageDescription

let package = Package(
    name: "http-peer",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "http-peer", targets: ["HTTPPeer"])
    ],
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
    ],
    targets: [
        .executableTarget(
            name: "HTTPPeer",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        )
    ]
)
