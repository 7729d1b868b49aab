import Foundation
import Hummingbird
import KizunaCore
import KizunaTestSupport
import Logging
import ServiceLifecycle
import Synchronization
import Testing

@testable import KizunaClient
@testable import KizunaServer

/// A real `kizuna serve` (embedded SQLite) on a loopback port, for SDK tests.
struct LiveServer {
    let url: URL
    let port: Int
    let admin: AdminClient
    let parts: ServerParts
    let directory: URL

    /// Starts a server, runs `body` against it, then shuts it down gracefully (open event streams end); in a
    /// ``ServerSlots`` slot.
    ///
    /// - Parameter announcesToken: Whether the store is new, so the server announces a first admin token (a
    ///   second instance over the same store does not; its `admin` client then has no token).
    static func run<Result: Sendable>(
        announcesToken: Bool = true,
        configure: (inout KizunaConfiguration) -> Void = { _ in },
        _ body: (LiveServer) async throws -> Result
    ) async throws -> Result {
        let asked = ContinuousClock.now
        return try await ServerSlots.withSlot {
            try await start(announcesToken: announcesToken, configure: configure, waitedForSlot: ContinuousClock.now - asked, body)
        }
    }

    private static func start<Result: Sendable>(
        announcesToken: Bool, configure: (inout KizunaConfiguration) -> Void, waitedForSlot: Duration,
        _ body: (LiveServer) async throws -> Result
    ) async throws -> Result {
        let started = ContinuousClock.now
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kizuna-live-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let (tokens, announce) = AsyncStream.makeStream(of: AdminCredential.self)
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        var configuration = KizunaConfiguration(port: 0, database: .sqlite(dataDirectory: directory.path), logLevel: .warning) {
            announce.yield($0)
        }
        configuration.useTestSettings()  // a test wanting others sets them in `configure`
        configure(&configuration)
        let parts = try await ServerParts(configuration: configuration)
        let built = ContinuousClock.now - started
        let group = ServiceGroup(services: [parts.application { listening.yield($0) }], logger: parts.logger)
        let running = Phase()
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                running.set("running")
                do {
                    try await group.run()
                    running.set("returned")
                } catch {
                    running.set("threw \(error)")
                    throw error
                }
            }
            do {
                // A server listens within seconds; one that has not in two minutes is stuck, and the stacks say where.
                guard let port = await firstElement(of: ports, within: .seconds(120), waitingFor: "port from a starting server") else {
                    throw KizunaError(
                        .internalError,
                        "The server did not listen\(Task.isCancelled ? " (the test was cancelled)" : ""): a slot took \(waitedForSlot), "
                            + "its parts \(built), its service group \(running.value), its store \(parts.readiness.current)")
                }
                // A server that failed to start announces no token: stop here rather than wait for one forever.
                try #require(await parts.readiness.settled() == .ready)
                var tokenIterator = tokens.makeAsyncIterator()
                let token = announcesToken ? try #require(await tokenIterator.next()).token : ""
                let url = try #require(URL(string: "http://127.0.0.1:\(port)"))
                let server = LiveServer(url: url, port: port, admin: AdminClient(server: url, token: token), parts: parts, directory: directory)
                let result = try await body(server)
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
                return result
            } catch {
                await group.triggerGracefulShutdown()
                try? await tasks.waitForAll()
                throw error
            }
        }
    }

    /// Registers the app `shop` with a store URL.
    func createShop() async throws {
        _ = try await admin.createApp(NewApp(id: "shop", name: "Shop", platform: .ios, bundleId: "com.example.shop", teamId: "ABCDE12345"))
        _ = try await admin.updateApp(id: "shop", AppPatch(storeURL: .set("https://apps.apple.com/app/id1")))
    }

    /// Publishes over whatever is live.
    @discardableResult
    func publish(_ kind: DocumentKind, _ json: String) async throws -> PublishedDocument {
        let document = try JSONDecoder().decode(JSONValue.self, from: Data(json.utf8))
        return try await admin.publish(kind, app: "shop", document: document, message: "test", expecting: .any)
    }

    /// An SDK connection for app `shop` with its own state directory.
    func app(version: String, directory: URL? = nil, timeout: Duration = .seconds(10), installId: String? = nil) throws -> KizunaApp {
        try KizunaApp(
            server: url, appId: "shop", directory: directory ?? Self.temporaryDirectory(),
            device: DeviceContext(appVersion: version, platform: .ios, osVersion: "17.5", locale: "ja-JP", installId: installId),
            timeout: timeout)
    }

    static func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("kizuna-sdk-\(UUID().uuidString)")
    }
}

/// Where a starting server's service group is, for the message of a server that never listened.
private final class Phase: Sendable {
    private let phase = Mutex("not started")
    var value: String { phase.withLock { $0 } }
    func set(_ value: String) { phase.withLock { $0 = value } }
}
