import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KizunaCore
import Logging
import NIOCore
import Testing

@testable import KizunaServer

/// A running server on a loopback port over a fresh store, with the admin token it announced on first start.
struct TestServer: Sendable {
    let database: KizunaDatabase
    let readiness: Readiness
    let feed: ChangeFeed
    /// Deletes expired data tombstones when a test asks.
    let sweeper: TombstoneSweeper
    let client: any TestClientProtocol
    let adminToken: String
    /// Sends push jobs.
    var pushSender: PushSender? = nil
    /// The apple-app-site-association file as served.
    var associationFile: AssociationFile? = nil
    /// The device routes' fast lane, when it is on.
    var deviceLane: DeviceFastLane? = nil

    /// Sends a request, with the admin token unless `authorized` is false.
    @discardableResult
    func send(
        _ method: HTTPRequest.Method,
        _ uri: String,
        json: String? = nil,
        headers: HTTPFields = [:],
        authorized: Bool = true,
        body: String? = nil
    ) async throws -> TestResponse {
        var headers = headers
        if authorized, headers[.authorization] == nil { headers[.authorization] = "Bearer \(adminToken)" }
        if json != nil { headers[.contentType] = "application/json" }
        let started = ContinuousClock.now
        do {
            return try await client.execute(uri: uri, method: method, headers: headers, body: (json ?? body).map { ByteBuffer(string: $0) }) {
                $0
            }
        } catch {
            let after = ContinuousClock.now - started
            let activity = database.engine == .postgres ? await PostgresActivity.snapshot() : nil
            throw RequestFailure(request: "\(method) \(uri)", after: after, error: error, store: activity)
        }
    }
}

/// A request the test client got no answer to, naming it and how long it waited: a bare `.readTimeout` says neither.
/// On PostgreSQL it carries what the store's sessions were doing then (``PostgresActivity``).
struct RequestFailure: Error, CustomStringConvertible {
    let request: String
    let after: Duration
    let error: any Error
    var store: String? = nil

    var description: String {
        "\(request) failed after \(after.formatted(.units(allowed: [.seconds], fractionalPart: .show(length: 1)))): \(error)"
            + (store.map { " (\($0))" } ?? "")
    }
}

extension TestResponse {
    /// The body decoded as `T`.
    func decode<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        try WireFormat.decoder().decode(T.self, from: Data(body.readableBytesView))
    }

    /// The body as an error envelope.
    var error: KizunaError? { try? decode(ErrorEnvelope.self).kizunaError }

    var text: String { String(buffer: body) }
}

/// Starts `kizuna serve`'s application in-process on port 0 over a fresh store and waits until it is ready.
func withTestServer(
    _ backend: TestBackend = .sqlite,
    configure: @Sendable (inout KizunaConfiguration) -> Void = { _ in },
    waitUntilReady: Bool = true,
    _ body: @Sendable (TestServer) async throws -> Void
) async throws {
    try await withTestStore(backend) { store in
        let (tokens, continuation) = AsyncStream.makeStream(of: AdminCredential.self)
        var configuration = KizunaConfiguration(port: 0, database: store.location, logLevel: .warning) { continuation.yield($0) }
        configuration.useTestSettings()  // a test wanting others sets them in `configure`
        configure(&configuration)
        configuration.keepBlobsInTemporaryDirectory()
        let parts = try await ServerParts(configuration: configuration)
        let (database, readiness, feed, sweeper, sender) = (parts.database, parts.readiness, parts.feed, parts.sweeper, parts.pushSender)
        let (associationFile, deviceLane) = (parts.associationFile, parts.deviceLane)
        try await parts.application().test(.live) { client in
            var token = ""
            if waitUntilReady {
                let state = await readiness.settled()
                // A server that failed to start announces no token: stop here rather than wait for one forever.
                try #require(state == .ready)
                var iterator = tokens.makeAsyncIterator()
                token = try #require(await iterator.next()).token
            }
            try await body(
                TestServer(
                    database: database, readiness: readiness, feed: feed, sweeper: sweeper, client: client, adminToken: token, pushSender: sender,
                    associationFile: associationFile, deviceLane: deviceLane))
        }
    }
}

/// Starts two instances of `kizuna serve`'s application over one fresh store, as two servers behind a load balancer
/// share it, and waits until both are ready. The store announces its admin token once, on the first start; both carry it.
func withTestServers(
    _ backend: TestBackend,
    configure: @Sendable (inout KizunaConfiguration) -> Void = { _ in },
    _ body: @Sendable (_ a: TestServer, _ b: TestServer) async throws -> Void
) async throws {
    try await withTestStore(backend) { store in
        let (tokens, announce) = AsyncStream.makeStream(of: AdminCredential.self)
        var configuration = KizunaConfiguration(port: 0, database: store.location, logLevel: .warning) { announce.yield($0) }
        configuration.useTestSettings()  // a test wanting others sets them in `configure`
        configure(&configuration)
        configuration.keepBlobsInTemporaryDirectory()
        let a = try await ServerParts(configuration: configuration)
        let b = try await ServerParts(configuration: configuration)
        let (databaseA, readinessA, feedA, sweeperA, senderA) = (a.database, a.readiness, a.feed, a.sweeper, a.pushSender)
        let (databaseB, readinessB, feedB, sweeperB, senderB) = (b.database, b.readiness, b.feed, b.sweeper, b.pushSender)
        let (fileA, fileB, laneA, laneB) = (a.associationFile, b.associationFile, a.deviceLane, b.deviceLane)
        let applicationB = b.application()
        try await a.application().test(.live) { clientA in
            let stateA = await readinessA.settled()
            try #require(stateA == .ready)
            var iterator = tokens.makeAsyncIterator()
            let token = try #require(await iterator.next()).token
            let instanceA = TestServer(
                database: databaseA, readiness: readinessA, feed: feedA, sweeper: sweeperA, client: clientA, adminToken: token, pushSender: senderA,
                associationFile: fileA, deviceLane: laneA)
            try await applicationB.test(.live) { clientB in
                let stateB = await readinessB.settled()
                try #require(stateB == .ready)
                let instanceB = TestServer(
                    database: databaseB, readiness: readinessB, feed: feedB, sweeper: sweeperB, client: clientB, adminToken: token,
                    pushSender: senderB, associationFile: fileB, deviceLane: laneB)
                try await body(instanceA, instanceB)
            }
        }
    }
}

extension KizunaConfiguration {
    /// A PostgreSQL store has no data directory, and blobs would default to `kizuna-blobs` in the working directory:
    /// tests keep them in a temporary one (shared by the instances of one test, as a deployment's would be).
    mutating func keepBlobsInTemporaryDirectory() {
        guard blobStorage == nil, case .postgres = database else { return }
        blobStorage = .directory(FileManager.default.temporaryDirectory.appendingPathComponent("kizuna-blobs-\(UUID().uuidString)").path)
    }
}
