import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import KizunaTestSupport
import SQLKit
import Testing

@testable import KizunaServer

/// Who a push job reaches and when: a condition over each device's registered context, the same local time in each
/// device's zone, two instances sharing one PostgreSQL store's jobs without sending anything twice, and provider
/// tokens reused and renewed on APNs' schedule.
@Suite("Push jobs")
struct PushJobsTests {
    @Test(arguments: TestBackend.available)
    func aConditionPicksDevicesByTheirRegisteredContext(_ backend: TestBackend) async throws {
        let push = try await PushFixture.start()
        try await withTestServer(backend, configure: push.configure) { server in
            try await push.prepare(server)
            try await PushFixture.register(server, 1, extra: #","appVersion":"2.1.0","country":"JP","attributes":{"plan":"pro"}"#)
            try await PushFixture.register(server, 2, extra: #","appVersion":"2.0.0","country":"US","attributes":{"plan":"pro"}"#)
            try await PushFixture.register(server, 3, extra: #","appVersion":"1.9.0","country":"JP","attributes":{"plan":"pro"}"#)
            try await PushFixture.register(server, 4, extra: #","appVersion":"2.5.0","country":"JP""#)
            try await PushFixture.register(server, 5)  // no version: a version condition is false for it
            let condition = #"{"all":[{"appVersion":{">=":"2.0"}},{"country":["jp"]},{"attribute":{"name":"plan","string":{"==":"pro"}}}]}"#
            let job = try await PushFixture.send(server, #"{"target":{"where":\#(condition)},"message":{"body":"Pro in Japan"}}"#)
            let done = try await push.finish(job.id, on: server, senders: [try #require(server.pushSender)])
            #expect(done.totals == .init(devices: 1, pending: 0, sent: 1, failed: 0, skipped: 0))
            #expect(push.apns.received.map(\.token) == [PushFixture.token(1)])
            // The registry the operator sees: every install, in order, with what it registered.
            let page = try await server.send(.get, "/v1/admin/apps/shop/push/devices?limit=2").decode(PushDeviceList.self)
            #expect(page.devices.map(\.installId) == ["i1", "i2"] && page.next == "i2" && page.devices[0].country == "JP")
        }
        await push.apns.stop()
    }

    @Test(arguments: TestBackend.available)
    func aLocalTimeSendReachesEachZoneAtItsOwnHour(_ backend: TestBackend) async throws {
        let push = try await PushFixture.start()
        try await withTestServer(backend, configure: push.configure) { server in
            try await push.prepare(server)
            try await PushFixture.register(server, 1, extra: #","timeZone":"Asia/Tokyo""#)
            try await PushFixture.register(server, 2, extra: #","timeZone":"America/New_York""#)
            try await PushFixture.register(server, 3)  // no zone: the job's fallback
            // 09:00 two days from now, wall clock.
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC")!
            let day = calendar.date(byAdding: .day, value: 2, to: EpochMillis.date(push.clock.now))!
            let parts = calendar.dateComponents([.year, .month, .day], from: day)
            let local = String(format: "%04d-%02d-%02dT09:00:00", parts.year!, parts.month!, parts.day!)
            let job = try await PushFixture.send(
                server,
                #"{"target":{"all":true},"message":{"body":"Good morning"},"sendAt":"\#(local)","localTime":true,"fallbackTimeZone":"Europe/Paris"}"#)
            #expect(job.localTime == local && job.state == .scheduled)
            func instant(_ zone: String) -> Int64 {
                var zoned = Calendar(identifier: .gregorian)
                zoned.timeZone = TimeZone(identifier: zone)!
                return EpochMillis.from(zoned.date(from: DateComponents(year: parts.year, month: parts.month, day: parts.day, hour: 9))!)
            }
            // Expanded when 09:00 first comes anywhere (UTC+14); each device due at 09:00 in its own zone.
            #expect(job.sendAt == instant("UTC") - 14 * 3_600_000)
            let sender = try #require(server.pushSender)
            let minutesToExpansion = (job.sendAt - push.clock.now) / 60_000 + 1
            push.clock.advance(minutes: minutesToExpansion)
            try await sender.drain()
            let due = try await PushFixture.deliveries(server, job.id)
            #expect(due["i1"]?.dueAt == instant("Asia/Tokyo") && due["i2"]?.dueAt == instant("America/New_York"))
            #expect(due["i3"]?.dueAt == instant("Europe/Paris") && push.apns.count == 0)
            // Tokyo's morning comes first, then Paris's (the fallback's), then New York's.
            push.clock.advance(minutes: (instant("Asia/Tokyo") - push.clock.now) / 60_000 + 1)
            try await sender.drain()
            #expect(push.apns.received.map(\.token) == [PushFixture.token(1)])
            push.clock.advance(minutes: (instant("Europe/Paris") - push.clock.now) / 60_000 + 1)
            try await sender.drain()
            #expect(push.apns.received.map(\.token) == [PushFixture.token(1), PushFixture.token(3)])
            push.clock.advance(minutes: (instant("America/New_York") - push.clock.now) / 60_000 + 1)
            let done = try await push.finish(job.id, on: server, senders: [sender])
            #expect(done.totals.sent == 3 && push.apns.received.map(\.token).last == PushFixture.token(2))
        }
        await push.apns.stop()
    }

    @Test(arguments: TestBackend.available.filter { $0 == .postgres })
    func twoInstancesShareAJobAndSendEachDeviceOnce(_ backend: TestBackend) async throws {
        let push = try await PushFixture.start()
        let devices = 240
        try await withTestServers(
            backend,
            configure: { configuration in
                push.configure(&configuration)
                configuration.push.batchSize = 20  // many claims, so both instances take part
            }
        ) { a, b in
            try await push.prepare(a)
            for n in 1...devices { try await PushFixture.register(b, n) }
            let job = try await PushFixture.send(a, #"{"target":{"all":true},"message":{"body":"Everyone"}}"#)
            let senders = [try #require(a.pushSender), try #require(b.pushSender)]
            for sender in senders { sender.poke() }
            let done = try await push.finish(job.id, on: b, senders: senders)
            #expect(done.totals == .init(devices: devices, pending: 0, sent: devices, failed: 0, skipped: 0))
            let tokens = push.apns.received.map(\.token)
            #expect(tokens.count == devices && Set(tokens) == Set((1...devices).map(PushFixture.token)))
            // One provider token for both: the one the first instance signed and stored.
            #expect(Set(push.apns.received.compactMap { $0.headers["authorization"] }).count == 1)
            #expect(senders.map(\.client.tokens.signedCount).reduce(0, +) == 1)
        }
        await push.apns.stop()
    }

    @Test func providerTokensAreReusedAndRenewedOnAPNsSchedule() async throws {
        let clock = PushFixture.Clock()
        let tokens = APNsProviderTokens(now: { EpochMillis.date(clock.now) })
        let key = P256.Signing.PrivateKey()
        let credentials = APNsCredentials(
            keyId: PushFixture.keyId, teamId: PushFixture.teamId, topic: PushFixture.topic, environment: nil, privateKey: key.pemRepresentation,
            keyFingerprint: PushCredentialStore.fingerprint(key))
        // Many sends at once sign one token.
        let concurrent = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<50 { group.addTask { try await tokens.token(for: credentials) } }
            return try await group.reduce(into: Set<String>()) { $0.insert($1) }
        }
        #expect(concurrent.count == 1 && tokens.signedCount == 1)
        let first = try #require(concurrent.first)
        clock.advance(minutes: 39)
        #expect(try await tokens.token(for: credentials) == first && tokens.signedCount == 1)
        clock.advance(minutes: 1)
        // The clock follows wall time: the token is signed some instant between these two readings.
        let signedFrom = clock.now / 1000
        let second = try await tokens.token(for: credentials)
        let signedBy = clock.now / 1000
        #expect(second != first && tokens.signedCount == 2)
        // The token's claims: kid, iss and a whole-second iat, signed by the key.
        let parts = second.split(separator: ".")
        let claims = try JSONDecoder().decode([String: JSONValue].self, from: try #require(base64URLDecoded(parts[1])))
        let header = try JSONDecoder().decode([String: JSONValue].self, from: try #require(base64URLDecoded(parts[0])))
        #expect(header["alg"] == .string("ES256") && header["kid"] == .string(PushFixture.keyId) && claims["iss"] == .string(PushFixture.teamId))
        let iat = try #require(claims["iat"]?.numberValue)
        #expect(iat == iat.rounded() && (Double(signedFrom)...Double(signedBy)).contains(iat), "a whole-second iat of the signing time")
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(base64URLDecoded(parts[2])))
        #expect(key.publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)))
        // Refused by APNs: replaced at once, however young; a stale refusal changes nothing.
        await tokens.refused(second, for: credentials)
        let third = try await tokens.token(for: credentials)
        #expect(third != second && tokens.signedCount == 3)
        await tokens.refused(second, for: credentials)
        #expect(try await tokens.token(for: credentials) == third)
    }
}
