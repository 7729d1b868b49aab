import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KizunaCore
import Logging
import NIOCore
import Testing

@testable import KizunaServer

/// The update gate and remote config end to end: admin publish over HTTP, device endpoints over HTTP.
@Suite("Update gate and remote config over HTTP")
struct UpdateGateTests {
    static let app =
        #"{"id":"shop","name":"Shop","platform":"ios","bundleId":"com.example.shop","teamId":"ABCDE12345","storeURL":"https://apps.apple.com/app/id1"}"#

    static func device(_ version: String, os: String = "17.5", installId: String = "install-1", locale: String = "en-US") -> String {
        #"{"appVersion":"\#(version)","osVersion":"\#(os)","platform":"ios","installId":"\#(installId)","locale":"\#(locale)"}"#
    }

    struct Decision: Decodable {
        var action: String
        var reason: String
        var title: String?
        var url: String?
        var policyVersion: Int64
        var policy: JSONValue
    }

    struct Published: Decodable {
        var version: Int64
        var author: String
        var message: String?
        var rollbackOf: Int64?
    }

    /// Publishes `document` over the current version and returns the new version.
    @discardableResult
    static func publish(_ server: TestServer, _ kind: String, _ document: String, message: String = "test") async throws -> Int64 {
        let current = try await server.send(.get, "/v1/admin/apps/shop/\(kind)")
        let etag = try #require(current.headers[.eTag])
        let response = try await server.send(
            .post,
            "/v1/admin/apps/shop/\(kind):publish",
            json: #"{"document":\#(document),"message":"\#(message)"}"#,
            headers: [.ifMatch: etag]
        )
        #expect(response.status == .ok, "\(response.text)")
        return try response.decode(Published.self).version
    }

    static func check(_ server: TestServer, _ device: String) async throws -> Decision {
        let response = try await server.send(.post, "/v1/apps/shop/gate:check", json: device, authorized: false)
        #expect(response.status == .ok, "\(response.text)")
        return try response.decode(Decision.self)
    }

    @Test(arguments: TestBackend.available)
    func gateDecisionsFollowEveryPublish(_ backend: TestBackend) async throws {
        try await withTestServer(backend) { server in
            try await server.send(.post, "/v1/admin/apps", json: Self.app)
            #expect(try await Self.check(server, Self.device("1.0")).action == "none")

            let v1 = try await Self.publish(server, "gate", #"{"minimumVersion":"3.10.0"}"#)
            let old = try await Self.check(server, Self.device("3.9.0"))
            #expect(old.action == "require" && old.reason == "belowMinimumVersion" && old.policyVersion == v1)
            #expect(old.url == "https://apps.apple.com/app/id1")
            #expect(try await Self.check(server, Self.device("3.10.0")).action == "none")

            try await Self.publish(server, "gate", #"{"minimumVersion":"3.10.0","blockedVersions":["3.10.0"]}"#)
            #expect(try await Self.check(server, Self.device("3.10.0")).reason == "blockedVersion")
            #expect(try await Self.check(server, Self.device("3.10.1")).action == "none")

            try await Self.publish(server, "gate", #"{"maintenance":{"active":true,"allowInstallIds":["tester","other-tester"]}}"#)
            #expect(try await Self.check(server, Self.device("9.0")).action == "maintenance")
            let tester = try await Self.check(server, Self.device("9.0", installId: "tester"))
            #expect(tester.action == "none")
            // The device gets the policy to decide offline, without the other testers' ids.
            #expect(tester.policy["maintenance"]?["allowInstallIds"] == .array([.string("tester")]))

            let past = #"{"minimumOSVersion":{"version":"17.0","deadline":"2020-01-01T00:00:00Z"}}"#
            try await Self.publish(server, "gate", past)
            #expect(try await Self.check(server, Self.device("9.0", os: "16.7")).reason == "osBelowMinimum")
            let future = #"{"minimumOSVersion":{"version":"17.0","deadline":"2099-01-01T00:00:00Z"}}"#
            let v5 = try await Self.publish(server, "gate", future)
            #expect(try await Self.check(server, Self.device("9.0", os: "16.7")).action == "recommend")

            // Rollback to version 1 is a new version that decides as version 1 did.
            let rollback = try await server.send(
                .post,
                "/v1/admin/apps/shop/gate:rollback",
                json: #"{"version":1}"#,
                headers: [.ifMatch: "\"\(v5)\""]
            )
            #expect(rollback.status == .ok)
            let restored = try rollback.decode(Published.self)
            #expect(restored.version == v5 + 1 && restored.rollbackOf == 1)
            let afterRollback = try await Self.check(server, Self.device("3.9.0", locale: "ja-JP"))
            #expect(afterRollback.action == "require" && afterRollback.title == "アップデートが必要です")

            let history = try await server.send(.get, "/v1/admin/apps/shop/gate/versions?limit=3")
            struct History: Decodable { var versions: [Published] }
            #expect(try history.decode(History.self).versions.map(\.version) == [6, 5, 4])
            let diff = try await server.send(.get, "/v1/admin/apps/shop/gate:diff?from=1&to=2")
            #expect(diff.text.contains(#""path":"$.blockedVersions""#) && diff.text.contains(#""kind":"added""#))
        }
    }

    @Test(arguments: TestBackend.available)
    func publishNeedsTheCurrentETagAndExactlyOneOfTwoRacersWins(_ backend: TestBackend) async throws {
        try await withTestServer(backend) { server in
            try await server.send(.post, "/v1/admin/apps", json: Self.app)
            let body = #"{"document":{"minimumVersion":"2"}}"#
            let missing = try await server.send(.post, "/v1/admin/apps/shop/gate:publish", json: body)
            #expect(missing.status == .preconditionRequired && missing.error?.code == .preconditionRequired)

            let statuses = try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
                for version in ["2", "3"] {
                    group.addTask {
                        try await server.send(
                            .post,
                            "/v1/admin/apps/shop/gate:publish",
                            json: #"{"document":{"minimumVersion":"\#(version)"}}"#,
                            headers: [.ifMatch: "\"0\""]
                        ).status
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses.sorted { $0.code < $1.code } == [.ok, .preconditionFailed])
            let stale = try await server.send(.post, "/v1/admin/apps/shop/gate:publish", json: body, headers: [.ifMatch: "\"0\""])
            #expect(stale.status == .preconditionFailed && stale.error?.field == "If-Match")
            let current = try await server.send(.get, "/v1/admin/apps/shop/gate")
            #expect(current.headers[.eTag] == "\"1\"")
        }
    }

    @Test func invalidDocumentsAreRefusedWithEveryProblemAndTheLiveOneStays() async throws {
        try await withTestServer { server in
            try await server.send(.post, "/v1/admin/apps", json: Self.app)
            try await Self.publish(server, "config", #"{"parameters":{"greeting":{"type":"string","default":"hi"}}}"#)
            let bad =
                #"{"document":{"conditions":[{"name":"new","when":{"appVersion":{">=":"v3"}}}],"parameters":{"greeting":{"type":"string","default":1}}}}"#
            for query in ["", "?validateOnly=true"] {
                let response = try await server.send(.post, "/v1/admin/apps/shop/config:publish\(query)", json: bad, headers: [.ifMatch: "\"1\""])
                #expect(response.status == .badRequest)
                #expect(
                    Set(response.error?.details.compactMap(\.field) ?? [])
                        == ["$.conditions[0].when.appVersion[\">=\"]", "$.parameters.greeting.default"]
                )
            }
            let dryRun = try await server.send(
                .post,
                "/v1/admin/apps/shop/config:publish?validateOnly=true",
                json: #"{"document":{}}"#,
                headers: [.ifMatch: "\"1\""]
            )
            #expect(dryRun.status == .ok && dryRun.text.contains(#""valid":true"#))
            let fetched = try await server.send(.post, "/v1/apps/shop/config:fetch", json: Self.device("1.0"), authorized: false)
            #expect(fetched.text == #"{"values":{"greeting":"hi"},"version":1}"#)
        }
    }

    @Test(arguments: TestBackend.available)
    func configFetchEvaluatesForTheDeviceAndAnswers304(_ backend: TestBackend) async throws {
        try await withTestServer(backend) { server in
            try await server.send(.post, "/v1/admin/apps", json: Self.app)
            try await Self.publish(
                server,
                "config",
                #"""
                {"conditions":[{"name":"new","when":{"appVersion":{">=":"3.10"}}}],
                 "parameters":{"newCheckout":{"type":"bool","default":false,"conditionalValues":{"new":true}},
                               "limits":{"type":"json","default":{"cart":20}}}}
                """#
            )
            let old = try await server.send(.post, "/v1/apps/shop/config:fetch", json: Self.device("3.9.9"), authorized: false)
            #expect(old.text == #"{"values":{"limits":{"cart":20},"newCheckout":false},"version":1}"#)
            let new = try await server.send(.post, "/v1/apps/shop/config:fetch", json: Self.device("3.10"), authorized: false)
            #expect(new.text.contains(#""newCheckout":true"#))
            let etag = try #require(new.headers[.eTag])
            let again = try await server.send(
                .post,
                "/v1/apps/shop/config:fetch",
                json: Self.device("3.10"),
                headers: [.ifNoneMatch: etag],
                authorized: false
            )
            #expect(again.status == .notModified && again.body.readableBytes == 0)
            let badVersion = try await server.send(.post, "/v1/apps/shop/config:fetch", json: Self.device("v3"), authorized: false)
            #expect(badVersion.status == .badRequest && badVersion.error?.details.first?.field == "$.appVersion")
            let unknown = try await server.send(.post, "/v1/apps/nope/config:fetch", json: Self.device("1"), authorized: false)
            #expect(unknown.status == .notFound)
        }
    }

    @Test func onlyTheRetainedVersionsAreKept() async throws {
        try await withTestServer(configure: { $0.documentRetention = 3 }) { server in
            try await server.send(.post, "/v1/admin/apps", json: Self.app)
            for minimum in 1...5 { try await Self.publish(server, "gate", #"{"minimumVersion":"\#(minimum)"}"#) }
            struct History: Decodable { var versions: [Published] }
            let history = try await server.send(.get, "/v1/admin/apps/shop/gate/versions")
            #expect(try history.decode(History.self).versions.map(\.version) == [5, 4, 3])
            let pruned = try await server.send(.post, "/v1/admin/apps/shop/gate:rollback", json: #"{"version":1}"#, headers: [.ifMatch: "*"])
            #expect(pruned.status == .notFound && pruned.error?.field == "$.version")
        }
    }

    @Test func oneInstallIsThrottledWithATypedErrorAndOthersAreNot() async throws {
        try await withTestServer(configure: { $0.deviceRateLimit = DeviceRateLimit(perMinute: 6, burst: 3) }) { server in
            try await server.send(.post, "/v1/admin/apps", json: Self.app)
            for _ in 0..<3 {
                #expect(try await server.send(.post, "/v1/apps/shop/config:fetch", json: Self.device("1"), authorized: false).status == .ok)
            }
            let throttled = try await server.send(.post, "/v1/apps/shop/gate:check", json: Self.device("1"), authorized: false)
            #expect(throttled.status == .tooManyRequests)
            // One token every 10 s: the wait is at most that, less what refilled while the three requests ran.
            let retryAfter = try #require(throttled.error?.retryAfter)
            #expect(throttled.error?.code == .throttled && (1...10).contains(retryAfter))
            #expect(throttled.headers[.retryAfter] == String(retryAfter))
            let other = try await server.send(.post, "/v1/apps/shop/config:fetch", json: Self.device("1", installId: "b"), authorized: false)
            #expect(other.status == .ok)
        }
    }

    @Test(arguments: TestBackend.available)
    func aPublishReachesTheChangeFeedAndTheDeviceCache(_ backend: TestBackend) async throws {
        try await withTestServer(backend) { server in
            try await server.send(.post, "/v1/admin/apps", json: Self.app)
            #expect(try await Self.check(server, Self.device("1.0")).action == "none")  // caches version 0
            try await server.feed.withSubscription { subscription in
                let version = try await Self.publish(server, "gate", #"{"minimumVersion":"2"}"#)
                var changes = subscription.changes.makeAsyncIterator()
                // The app's own change can still be on its way (PostgreSQL's feed delivers it after the subscription).
                var change = try #require(await changes.next())
                while change.kind == "app" { change = try #require(await changes.next()) }
                #expect(change.kind == "gate" && change.entityId == "shop" && change.version == version)
            }
            #expect(try await Self.check(server, Self.device("1.0")).action == "require")
        }
    }
}

/// Two `kizuna serve` instances over one PostgreSQL store: a publish on one reaches the other through
/// LISTEN/NOTIFY and the `changes` log.
@Suite("Realtime across instances")
struct CrossInstanceTests {
    @Test(arguments: TestBackend.available.filter { $0 == .postgres })
    func aPublishOnInstanceAReachesInstanceB(_ backend: TestBackend) async throws {
        // No polling: the event must come through LISTEN/NOTIFY, not the fallback read.
        try await withTestServers(backend, configure: { $0.changePollInterval = .seconds(3600) }) { instanceA, instanceB in
            try await instanceA.send(.post, "/v1/admin/apps", json: UpdateGateTests.app)
            // B caches the app with no policy, then subscribes.
            #expect(try await UpdateGateTests.check(instanceB, UpdateGateTests.device("1.0")).action == "none")
            try await instanceB.feed.withSubscription { subscription in
                let version = try await UpdateGateTests.publish(instanceA, "gate", #"{"minimumVersion":"2"}"#)
                // The app's registration is a change too, which B may or may not have read before subscribing.
                var changes = subscription.changes.makeAsyncIterator()
                var change = try #require(await changes.next())
                if change.kind == "app" { change = try #require(await changes.next()) }
                #expect(change.kind == "gate" && change.version == version)
            }
            // B's cache was dropped before its subscribers heard of the change.
            #expect(try await UpdateGateTests.check(instanceB, UpdateGateTests.device("1.0")).action == "require")
        }
    }
}
