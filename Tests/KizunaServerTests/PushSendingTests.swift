import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import KizunaTestSupport
import SQLKit
import Testing

@testable import KizunaServer

/// Push jobs sent through a local APNs that checks what Apple's does (HTTP/2 over TLS, the provider token's
/// signature and age, every header, the payload size), on SQLite and PostgreSQL: credentials kept secret, each
/// device's notification in its language with every header, each APNs reason handled as it must be.
@Suite("Push sending")
struct PushSendingTests {
    @Test(arguments: TestBackend.available)
    func credentialsAreSealedAndNeverAnswered(_ backend: TestBackend) async throws {
        let push = try await PushFixture.start()
        try await withTestServer(backend, configure: push.configure) { server in
            let created = try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app)
            #expect(created.status == .created)
            #expect(try await server.send(.get, "/v1/admin/apps/shop/push/credentials").status == .notFound)
            let set = try await server.send(.put, "/v1/admin/apps/shop/push/credentials", json: push.credentials)
            #expect(set.status == .ok)
            let info = try set.decode(PushCredentialsInfo.self)
            #expect(info.keyId == PushFixture.keyId && info.teamId == PushFixture.teamId && info.topic == PushFixture.topic)
            #expect(info.keyFingerprint == PushCredentialStore.fingerprint(push.key))
            let shown = try await server.send(.get, "/v1/admin/apps/shop/push/credentials")
            #expect(try shown.decode(PushCredentialsInfo.self) == info)
            // No answer carries the key; the stored bytes are not the key either.
            let keyBody = push.key.pemRepresentation.split(separator: "\n").dropFirst().first.map(String.init) ?? "?"
            for answer in [set, shown] { #expect(!answer.text.contains("PRIVATE KEY") && !answer.text.contains(keyBody)) }
            let stored = try #require(try await server.database.raw("SELECT sealed_key FROM push_credentials").first())
            let sealed = try stored.decode(column: "sealed_key", as: String.self)
            #expect(!sealed.contains(keyBody) && !(Data(base64Encoded: sealed).map { String(decoding: $0, as: UTF8.self) } ?? "").contains("PRIVATE"))

            // Bad input is refused naming the field, and leaves what was set.
            let badKey = try await server.send(
                .put, "/v1/admin/apps/shop/push/credentials", json: #"{"p8":"nope","keyId":"KEY123ABCD","teamId":"TEAM12345A"}"#)
            #expect(badKey.status == .badRequest && badKey.error?.field == "p8")
            let badId = try await server.send(
                .put, "/v1/admin/apps/shop/push/credentials", json: push.credentials.replacingOccurrences(of: PushFixture.keyId, with: "short"))
            #expect(badId.error?.field == "keyId")
            #expect(try await server.send(.get, "/v1/admin/apps/shop/push/credentials").decode(PushCredentialsInfo.self) == info)
            if case .sqlite(let path) = server.database.location {
                // The secret key was made on first use, beside the store, readable by its owner only.
                let file = ((path as NSString).deletingLastPathComponent as NSString).appendingPathComponent("secret.key")
                let attributes = try FileManager.default.attributesOfItem(atPath: file)
                #expect((attributes[.posixPermissions] as? Int) == 0o600 && (attributes[.size] as? Int) == 32)
            }
            #expect(try await server.send(.delete, "/v1/admin/apps/shop/push/credentials").status == .noContent)
            #expect(try await server.send(.get, "/v1/admin/apps/shop/push/credentials").status == .notFound)
        }
        await push.apns.stop()
    }

    @Test(arguments: TestBackend.available)
    func eachDeviceGetsItsLanguageWithEveryHeader(_ backend: TestBackend) async throws {
        let push = try await PushFixture.start()
        try await withTestServer(backend, configure: push.configure) { server in
            try await push.prepare(server)
            let alice = try await GraphQLEndpointTests.signUp(server, "alice@example.com")
            try await PushFixture.register(server, 1, extra: #","locale":"ja-JP""#, session: alice.token)
            try await PushFixture.register(server, 2, extra: #","locale":"en-GB""#, environment: "sandbox", session: alice.token)
            try await PushFixture.register(server, 3, extra: #","locale":"ja-JP""#)  // somebody else
            let job = try await PushFixture.send(
                server,
                #"""
                {"target":{"user":"\#(alice.id)"},"message":{"title":{"default":"Hello","ja":"こんにちは"},"body":"New message",
                "badge":3,"sound":"default","threadId":"room-1","collapseId":"room-1","data":{"room":"r1"}}}
                """#)
            #expect(job.state == .scheduled)
            let done = try await push.finish(job.id, on: server, senders: [try #require(server.pushSender)])
            #expect(done.state == .done && done.totals == .init(devices: 2, pending: 0, sent: 2, failed: 0, skipped: 0))
            let received = push.apns.received
            #expect(Set(received.map(\.token)) == [PushFixture.token(1), PushFixture.token(2)] && received.allSatisfy { $0.status == 200 })
            for notification in received {
                #expect(notification.headers["apns-topic"] == PushFixture.topic && notification.headers["apns-push-type"] == "alert")
                #expect(notification.headers["apns-priority"] == "10" && notification.headers["apns-collapse-id"] == "room-1")
                #expect(notification.headers["apns-expiration"] == "0" && UUID(uuidString: notification.headers["apns-id"] ?? "") != nil)
                let payload = try JSONDecoder().decode(JSONValue.self, from: notification.payload)
                let title = notification.token == PushFixture.token(1) ? "こんにちは" : "Hello"
                #expect(payload["aps"]?["alert"]?["title"] == .string(title) && payload["aps"]?["alert"]?["body"] == .string("New message"))
                #expect(
                    payload["aps"]?["badge"] == .number(3) && payload["aps"]?["thread-id"] == .string("room-1") && payload["room"] == .string("r1"))
            }
            // One provider token for every notification.
            #expect(Set(received.compactMap(\.issuedAt)).count == 1)
            let deliveries = try await PushFixture.deliveries(server, job.id)
            // The apns-id each was sent with, as APNs answered it.
            let sentIds = Set(received.compactMap { $0.headers["apns-id"] })
            #expect(sentIds.count == 2 && deliveries["i1"]?.apnsId.map(sentIds.contains) == true && deliveries["i3"] == nil)
        }
        await push.apns.stop()
    }

    @Test(arguments: TestBackend.available)
    func eachReasonIsHandledAsAPNsMeansIt(_ backend: TestBackend) async throws {
        let push = try await PushFixture.start()
        try await withTestServer(backend, configure: push.configure) { server in
            try await push.prepare(server)
            for n in 1...9 { try await PushFixture.register(server, n) }
            let retiredAt = EpochMillis.now  // after the registrations: APNs' word is the latest
            let scripts: [Int: [APNsTestServer.Answer]] = [
                1: [.reject(status: 410, reason: "Unregistered", timestamp: retiredAt)],
                2: [.reject(status: 400, reason: "BadDeviceToken")],
                3: [.reject(status: 400, reason: "DeviceTokenNotForTopic")],
                4: [.reject(status: 403, reason: "ExpiredProviderToken")],
                5: [.reject(status: 429, reason: "TooManyRequests")],
                6: [.reject(status: 500, reason: "InternalServerError")],
                7: [.reject(status: 503, reason: "ServiceUnavailable"), .reject(status: 503, reason: "ServiceUnavailable")],
                8: [.reject(status: 413, reason: "PayloadTooLarge")],
            ]
            for (n, answers) in scripts { push.apns.script(PushFixture.token(n), answers) }
            let job = try await PushFixture.send(server, #"{"target":{"all":true},"message":{"body":"Hi"}}"#)
            let done = try await push.finish(job.id, on: server, senders: [try #require(server.pushSender)], advancing: 15)
            let deliveries = try await PushFixture.deliveries(server, job.id)
            // Gone for good: failed with APNs' reason, and the token retired (410 as of APNs' timestamp).
            for (n, reason) in [(1, "Unregistered"), (2, "BadDeviceToken"), (3, "DeviceTokenNotForTopic"), (8, "PayloadTooLarge")] {
                #expect(
                    deliveries["i\(n)"]?.state == .failed && deliveries["i\(n)"]?.reason == reason,
                    "i\(n): \(String(describing: deliveries["i\(n)"]))")
            }
            let registry = PushDeviceRepository(database: server.database)
            #expect(try await registry.device(app: "shop", installId: "i1")?.retiredAt == retiredAt)
            #expect(try await registry.device(app: "shop", installId: "i2")?.retiredAt != nil)
            #expect(try await registry.device(app: "shop", installId: "i8")?.retiredAt == nil)
            // A refused provider token is replaced at once and the notification sent again; the rest retried later.
            #expect(deliveries["i4"]?.state == .sent && deliveries["i4"]?.attempts == 1)
            for n in [5, 6] { #expect(deliveries["i\(n)"]?.state == .sent && deliveries["i\(n)"]?.attempts == 2) }
            #expect(deliveries["i7"]?.state == .sent && deliveries["i7"]?.attempts == 3 && deliveries["i9"]?.state == .sent)
            #expect(done.totals == .init(devices: 9, pending: 0, sent: 5, failed: 4, skipped: 0))
            #expect(done.reasons == ["Unregistered": 1, "BadDeviceToken": 1, "DeviceTokenNotForTopic": 1, "PayloadTooLarge": 1])
            #expect(!push.apns.received.contains { $0.reason == "TooManyProviderTokenUpdates" })
            // Sends, failures and retries by reason on /metrics.
            let metrics = try await server.send(.get, "/metrics").text
            for line in [
                #"kizuna_push_failures_total{reason="Unregistered"}"#, #"kizuna_push_retries_total{reason="ServiceUnavailable"}"#,
                "kizuna_push_sent_total",
            ] {
                #expect(metrics.contains(line), "\(line)")
            }

            // A retired token is skipped without asking APNs; registering it again revives it.
            let before = push.apns.count
            let again = try await PushFixture.send(server, #"{"target":{"installs":["i1","i9"]},"message":{"body":"Again"}}"#)
            let second = try await push.finish(again.id, on: server, senders: [try #require(server.pushSender)])
            #expect(second.totals == .init(devices: 2, pending: 0, sent: 1, failed: 0, skipped: 1) && second.reasons == ["TokenRetired": 1])
            #expect(push.apns.count == before + 1)
            try await PushFixture.register(server, 1)
            let revived = try await PushFixture.send(server, #"{"target":{"install":"i1"},"message":{"body":"Back"}}"#)
            #expect(try await push.finish(revived.id, on: server, senders: [try #require(server.pushSender)]).totals.sent == 1)
        }
        await push.apns.stop()
    }

    @Test(arguments: TestBackend.available)
    func badJobsAreRefusedNamingWhatIsWrong(_ backend: TestBackend) async throws {
        let push = try await PushFixture.start()
        try await withTestServer(backend, configure: push.configure) { server in
            let created = try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app)
            #expect(created.status == .created)
            #expect(try await Self.refusal(server, #"{"target":{"all":true},"message":{"body":"Hi"}}"#).field == "credentials")
            #expect(try await server.send(.put, "/v1/admin/apps/shop/push/credentials", json: push.credentials).status == .ok)
            let big = String(repeating: "x", count: 4100)
            #expect(try await Self.refusal(server, #"{"target":{"all":true},"message":{"body":"\#(big)"}}"#).field == "message")
            #expect(try await Self.refusal(server, #"{"target":{"all":true},"message":{"body":"Hi","pushType":"voip"}}"#).code == nil)
            #expect(
                try await Self.refusal(server, #"{"target":{"all":true},"message":{"contentAvailable":true,"priority":10}}"#).field
                    == "message.priority")
            #expect(try await Self.refusal(server, #"{"target":{"installs":[]},"message":{"body":"Hi"}}"#).field == "target")
            #expect(
                try await Self.refusal(server, #"{"target":{"where":{"appVersion":{"~":"1"}}},"message":{"body":"Hi"}}"#).code == "validation_failed")
            #expect(try await Self.refusal(server, #"{"target":{"all":true},"message":{"body":"Hi"},"sendAt":"tomorrow"}"#).field == "sendAt")
            #expect(
                try await Self.refusal(server, #"{"target":{"all":true},"message":{"body":"Hi"},"sendAt":"2026-12-01T09:00:00Z","localTime":true}"#)
                    .field == "sendAt")
            #expect(
                try await Self.refusal(server, #"{"target":{"all":true},"message":{"body":"Hi"},"fallbackTimeZone":"Mars/Base"}"#).field
                    == "fallbackTimeZone")
            #expect(try await server.send(.post, "/v1/admin/apps/nope/push/jobs", json: #"{"target":{"all":true},"message":{}}"#).status == .notFound)
            #expect(try await server.send(.get, "/v1/admin/push/jobs/push_nope").status == .notFound)
        }
        await push.apns.stop()
    }

    /// The code and field a job creation was refused with (`nil`s when it was not).
    static func refusal(_ server: TestServer, _ json: String) async throws -> (code: String?, field: String?) {
        let error = try await server.send(.post, "/v1/admin/apps/shop/push/jobs", json: json).error
        return (error?.code.rawValue, error?.field)
    }
}
