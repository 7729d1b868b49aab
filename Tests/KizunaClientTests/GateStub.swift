import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import Testing

@testable import KizunaClient

/// An API that fails, and a static host, on one loopback port, for the update gate's fallback to its signed mirrors:
/// `POST /v1/apps/shop/gate:check` answers as ``API`` says, and `GET /mirrors/<name>` serves the named file (404 for a
/// name it was not given).
struct GateStub {
    /// What `gate:check` does.
    enum API: Sendable {
        /// Answers this status with this body.
        case failing(code: Int, body: String)
        /// Accepts the request and never answers it (until the test ends).
        case silent
    }

    /// The stub's base URL, the SDK's server.
    let url: URL
    private let log: Locked<[String]>

    /// What it was asked, in order: `gate:check`, or a mirror's name.
    var requests: [String] { log.withLock { $0 } }

    /// The URL of the mirror file `name`.
    func mirror(_ name: String) -> URL {
        url.appendingPathComponent("mirrors").appendingPathComponent(name)
    }

    /// Starts the stub serving `mirrors` (by name), runs `body` against it, then releases what it holds and stops.
    static func run<Result: Sendable>(api: API, mirrors: [String: Data], _ body: (GateStub) async throws -> Result) async throws -> Result {
        let log = Locked<[String]>([])
        let held = HeldRequests()
        let files = mirrors.mapValues { String(decoding: $0, as: UTF8.self) }
        let router = Router()
        router.post("/v1/apps/shop/gate:check") { _, _ -> EditedResponse<String> in
            log.withLock { $0.append("gate:check") }
            switch api {
            case .failing(let code, let text):
                return EditedResponse(status: HTTPResponse.Status(code: code), response: text)
            case .silent:
                await held.wait()
                return EditedResponse(status: HTTPResponse.Status(code: 503), response: "")
            }
        }
        router.get("/mirrors/{name}") { _, context -> EditedResponse<String> in
            let name = context.parameters.get("name") ?? ""
            log.withLock { $0.append(name) }
            guard let file = files[name] else { return EditedResponse(status: HTTPResponse.Status(code: 404), response: "Not Found") }
            return EditedResponse(status: HTTPResponse.Status(code: 200), response: file)
        }
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        let stub = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { listening.yield($0.localAddress?.port ?? 0) })
        let group = ServiceGroup(services: [stub], logger: Logger(label: "gate-stub"))
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            do {
                var portIterator = ports.makeAsyncIterator()
                let port = try #require(await portIterator.next())
                let result = try await body(GateStub(url: try #require(URL(string: "http://127.0.0.1:\(port)")), log: log))
                held.release()
                await group.triggerGracefulShutdown()
                try await tasks.waitForAll()
                return result
            } catch {
                held.release()
                await group.triggerGracefulShutdown()
                try? await tasks.waitForAll()
                throw error
            }
        }
    }
}

/// Requests a handler holds open until ``release()``; one arriving after it is not held.
private final class HeldRequests: Sendable {
    private let state = Locked((released: false, waiting: [AsyncStream<Never>.Continuation]()))

    /// Returns once the requests are released.
    func wait() async {
        let (stream, continuation) = AsyncStream.makeStream(of: Never.self)
        let released = state.withLock { held -> Bool in
            if !held.released { held.waiting.append(continuation) }
            return held.released
        }
        if released { return }
        for await _ in stream {}
    }

    func release() {
        let waiting = state.withLock { held -> [AsyncStream<Never>.Continuation] in
            held.released = true
            defer { held.waiting = [] }
            return held.waiting
        }
        for continuation in waiting { continuation.finish() }
    }
}
