import Foundation
import KizunaCore
import SQLKit
import Testing

@testable import KizunaClient
@testable import KizunaServer

/// Two `kizuna serve` instances over one PostgreSQL store, the SDK listening on one and the admin publishing on
/// the other.
@Suite("SDK listener across instances")
struct CrossInstanceListenerTests {
    static var postgresURL: String? {
        ProcessInfo.processInfo.environment["KIZUNA_TEST_DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    @Test(
        .enabled(
            if: postgresURL != nil || ProcessInfo.processInfo.environment["CI"] == "true",
            "KIZUNA_TEST_DATABASE_URL is not set: the PostgreSQL listener case was left out"))
    func aPublishOnInstanceAReachesAListenerOnInstanceB() async throws {
        let url = try #require(Self.postgresURL, "KIZUNA_TEST_DATABASE_URL must be set under CI; see .ci/run")
        let schema = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let admin = try KizunaDatabase(location: .postgres(url: url))
        try await admin.raw("CREATE SCHEMA \(ident: schema)").run()
        let configure: (inout KizunaConfiguration) -> Void = {
            $0.database = .postgres(url: url, schema: schema)
            // No polling: the event must come through LISTEN/NOTIFY.
            $0.changePollInterval = .seconds(3600)
        }
        var failure: (any Error)?
        do { try await Self.publishOnAListenOnB(configure) } catch { failure = error }
        try? await admin.raw("DROP SCHEMA \(ident: schema) CASCADE").run()
        await admin.shutdown()
        if let failure { throw failure }
    }

    static func publishOnAListenOnB(_ configure: @escaping (inout KizunaConfiguration) -> Void) async throws {
        try await LiveServer.run(configure: configure) { a in
            try await a.createShop()
            try await a.publish(.config, #"{"parameters":{"greeting":{"type":"string","default":"v1"}}}"#)
            try await LiveServer.run(announcesToken: false, configure: configure) { b in
                let config = RemoteConfig(app: try b.app(version: "1.0"))
                var updates = config.updates(activate: true).makeAsyncIterator()
                #expect(try await updates.next()?.version == 1)  // B's opening snapshot: B is connected
                try await a.publish(.config, #"{"parameters":{"greeting":{"type":"string","default":"v2"}}}"#)
                let update = try #require(try await updates.next())
                #expect(update.version == 2 && update.activated && config.string(forKey: "greeting") == "v2")
            }
        }
    }
}
