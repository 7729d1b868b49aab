import Foundation
import Hummingbird
import KizunaCore
import Logging
import ServiceLifecycle
import Testing

@testable import KizunaClient
@testable import KizunaServer

@Suite("RemoteConfig against kizuna serve")
struct RemoteConfigTests {
    struct Defaults: Encodable {
        var greeting = "hello"
        var newCheckout = false
        var limits = ["cart": 10]
    }

    /// The wire shape of the `limits` parameter, and the domain type built from it.
    struct LimitsDTO: Decodable { var cart: Int }
    struct CartLimit: Equatable { var items: Int }

    static let template = #"""
        {"conditions":[{"name":"new","when":{"appVersion":{">=":"3.10"}}}],
         "parameters":{"newCheckout":{"type":"bool","default":false,"conditionalValues":{"new":true}},
                       "limits":{"type":"json","default":{"cart":20}},
                       "ratio":{"type":"number","default":0.25}}}
        """#

    @Test func fetchActivatePersistAndDecode() async throws {
        try await LiveServer.run { server in
            try await server.createShop()
            try await server.publish(.config, Self.template)
            let directory = LiveServer.temporaryDirectory()
            let app = try server.app(version: "3.10.0", directory: directory)
            let config = try RemoteConfig(app: app, defaultsFrom: Defaults())

            #expect(config.string(forKey: "greeting") == "hello" && config.source(forKey: "greeting") == .default)
            #expect(config.bool(forKey: "newCheckout") == false && config.source(forKey: "ratio") == .missing)

            #expect(try await config.fetch(minimumInterval: .zero) == .fetched(version: 1))
            #expect(config.bool(forKey: "newCheckout") == false, "fetched values wait for activate()")
            #expect(try await config.activate())
            #expect(config.bool(forKey: "newCheckout") == true && config.source(forKey: "newCheckout") == .remote)
            #expect(config.double(forKey: "ratio") == 0.25 && config.int(forKey: "ratio") == nil)
            #expect(config.string(forKey: "greeting") == "hello", "keys the server does not give keep their default")
            #expect(try config.decode(LimitsDTO.self, forKey: "limits", as: { CartLimit(items: $0.cart) }) == CartLimit(items: 20))
            let wrongShape = #expect(throws: KizunaError.self) { try config.decode([String].self, forKey: "limits") }
            #expect(wrongShape?.code == .validationFailed && wrongShape?.field == "limits")
            let missing = #expect(throws: KizunaError.self) { try config.decode(Int.self, forKey: "nope") }
            #expect(missing?.code == .notFound)

            // Within the minimum interval the network is not used; after it, the ETag makes the answer 304.
            #expect(try await config.fetch(minimumInterval: .seconds(3600)) == .skipped)
            #expect(try await config.fetch(minimumInterval: .zero) == .notModified(version: 1))
            #expect(try await config.activate() == false)

            // A relaunch (a new object over the same directory) starts from the activated values, not defaults.
            let relaunched = RemoteConfig(app: try server.app(version: "3.10.0", directory: directory))
            #expect(relaunched.activeVersion == 1 && relaunched.bool(forKey: "newCheckout") == true)

            // A damaged state file reads as absent: defaults, never garbage or a crash.
            try Data("{\"format\":1,\"value\":{\"active\":7}}".utf8).write(to: directory.appendingPathComponent(RemoteConfig.file))
            let damaged = RemoteConfig(app: try server.app(version: "3.10.0", directory: directory), defaults: ["newCheckout": false])
            #expect(damaged.activeVersion == nil && damaged.bool(forKey: "newCheckout") == false)
        }
    }

    @Test func offlineKeepsTheActivatedValuesAndDoesNotCountAsAFetch() async throws {
        let directory = LiveServer.temporaryDirectory()
        let port = try await LiveServer.run { server in
            try await server.createShop()
            try await server.publish(.config, Self.template)
            let config = RemoteConfig(app: try server.app(version: "3.10.0", directory: directory))
            try await config.fetchAndActivate(minimumInterval: .zero)
            return server.port
        }
        // The server is gone: the fetch fails with `transport`, the values stay, and the failure does not start
        // a minimum interval (firebase-ios-sdk #6628).
        let url = try #require(URL(string: "http://127.0.0.1:\(port)"))
        let offline = try KizunaApp(server: url, appId: "shop", directory: directory, device: DeviceContext(appVersion: "3.10.0"))
        let config = RemoteConfig(app: offline, defaults: ["newCheckout": false])
        let lastFetch = config.lastFetch
        let error = await #expect(throws: KizunaError.self) { try await config.fetch(minimumInterval: .zero) }
        // `transport` (refused); `timeout` when a loaded machine (the suite runs in parallel) does not deliver the
        // refusal within the 10 s deadline. Either way the fetch failed and nothing below may change.
        #expect(error?.code == .transport || error?.code == .timeout)
        #expect(config.bool(forKey: "newCheckout") == true && config.activeVersion == 1)
        #expect(config.lastFetch == lastFetch)
    }

    @Test func theFetchTimeoutIsADeadline() async throws {
        // A server that accepts the request and never answers.
        let (release, released) = AsyncStream.makeStream(of: Never.self)
        let router = Router()
        router.post("/v1/apps/shop/config:fetch") { _, _ -> String in
            for await _ in release {}
            return "{}"
        }
        let (ports, listening) = AsyncStream.makeStream(of: Int.self)
        let silent = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { listening.yield($0.localAddress?.port ?? 0) })
        let group = ServiceGroup(services: [silent], logger: Logger(label: "silent"))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            var iterator = ports.makeAsyncIterator()
            let port = try #require(await iterator.next())
            let app = try KizunaApp(
                server: URL(string: "http://127.0.0.1:\(port)")!, appId: "shop", directory: LiveServer.temporaryDirectory(),
                device: DeviceContext(appVersion: "1.0"), timeout: .milliseconds(300))
            let config = RemoteConfig(app: app, defaults: ["greeting": "hello"])
            let error = await #expect(throws: KizunaError.self) { try await config.fetchAndActivate(minimumInterval: .zero) }
            #expect(error?.code == .timeout)
            #expect(config.string(forKey: "greeting") == "hello")
            released.finish()
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }

    @Test func throttledFetchesThrowWithRetryAfter() async throws {
        try await LiveServer.run(configure: { $0.deviceRateLimit = DeviceRateLimit(perMinute: 1, burst: 1) }) { server in
            try await server.createShop()
            let directory = LiveServer.temporaryDirectory()
            let config = RemoteConfig(app: try server.app(version: "1.0", directory: directory))
            #expect(try await config.fetch(minimumInterval: .zero) == .fetched(version: 0))
            let throttled = await #expect(throws: KizunaError.self) { try await config.fetch(minimumInterval: .zero) }
            #expect(throttled?.code == .throttled && (throttled?.retryAfter ?? 0) > 0)
            // Until then the SDK answers by itself, with the time left: a relaunch over the same directory, pointed at
            // a server that is not there, still says `throttled` (not `transport`), so no request was made.
            let offline = try KizunaApp(
                server: URL(string: "http://127.0.0.1:9")!, appId: "shop", directory: directory, device: DeviceContext(appVersion: "1.0"))
            let again = await #expect(throws: KizunaError.self) { try await RemoteConfig(app: offline).fetch(minimumInterval: .zero) }
            #expect(again?.code == .throttled && (again?.retryAfter ?? 0) > 0 && again!.retryAfter! <= throttled!.retryAfter!)
        }
    }

    @Test func aConfigPublishReachesAConnectedListener() async throws {
        try await LiveServer.run { server in
            try await server.createShop()
            try await server.publish(.config, #"{"parameters":{"greeting":{"type":"string","default":"v1"}}}"#)
            let config = RemoteConfig(app: try server.app(version: "1.0"), defaults: ["greeting": "default"])
            var updates = config.updates().makeAsyncIterator()

            // The stream opens with a snapshot naming version 1, which the listener fetches.
            let first = try #require(try await updates.next())
            #expect(first == RemoteConfigUpdate(version: 1, changedKeys: ["greeting"], activated: false))
            #expect(config.string(forKey: "greeting") == "default", "an update waits for activate()")

            // Connected now: the next publish arrives as a live event.
            try await server.publish(.config, #"{"parameters":{"greeting":{"type":"string","default":"v2"}}}"#)
            let second = try #require(try await updates.next())
            #expect(second.version == 2 && second.changedKeys == ["greeting"])
            #expect(try await config.activate())
            #expect(config.string(forKey: "greeting") == "v2")
        }
    }

    @Test func eventsResumeAfterTheLastEventID() async throws {
        try await LiveServer.run { server in
            try await server.createShop()
            for greeting in ["a", "b", "c"] {
                try await server.publish(.config, #"{"parameters":{"greeting":{"type":"string","default":"\#(greeting)"}}}"#)
            }
            try await server.publish(.gate, #"{"minimumVersion":"2"}"#)
            let app = try server.app(version: "1.0")
            var fresh = app.events().makeAsyncIterator()
            #expect(try await fresh.next() == .snapshot(config: 3, gate: 1))
            // A device that saw nothing yet (event id 0) is replayed every config and gate publish, in order.
            var resumed = app.events(after: "0").makeAsyncIterator()
            var replayed: [AppEvent] = []
            for _ in 0..<4 { replayed.append(try #require(try await resumed.next())) }
            #expect(replayed == [.config(version: 1), .config(version: 2), .config(version: 3), .gate(version: 1)])
            let unknown = try KizunaApp(
                server: server.url, appId: "nope", directory: LiveServer.temporaryDirectory(), device: DeviceContext(appVersion: "1.0"))
            var missing = unknown.events().makeAsyncIterator()
            let error = await #expect(throws: KizunaError.self) { _ = try await missing.next() }
            #expect(error?.code == .notFound)
        }
    }
}
