import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KizunaCore
import KizunaTestSupport
import Logging
import SQLKit
import Testing

@testable import KizunaServer

/// The store holes an adversarial review found: two bootstrap tokens, a world-readable SQLite file, two servers on one
/// SQLite store, a database that goes away, an apple-app-site-association that one more app breaks, unknown apps that
/// look empty, and documents nested without bound.
@Suite("Store hardening")
struct StoreHardeningTests {
    /// On PostgreSQL, where several instances share a store (on SQLite a second server is refused, and in one process
    /// writers take turns).
    @Test(arguments: TestBackend.available.filter { $0 == .postgres })
    func instancesStartingTogetherCreateExactlyOneBootstrapToken(_ backend: TestBackend) async throws {
        try await withTestStore(backend) { store in
            try await MigrationRunner(database: try store.open()).migrate()
            // Four instances, each with its own connection pool, race on the empty store.
            let instances = try (0..<4).map { _ in AdminTokenSQLRepository(database: try store.open()) }
            let created = try await withThrowingTaskGroup(of: Bool.self) { group in
                for tokens in instances { group.addTask { try await tokens.createFirst(name: "bootstrap") != nil } }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(created == 1)
            #expect(try await instances[0].count() == 1)
            #expect(try await instances[1].createFirst(name: "bootstrap") == nil)
            for tokens in instances { await tokens.database.shutdown() }
        }
    }

    /// Advisory locks belong to the whole database: two stores in one (a schema each) must not take turns on each
    /// other's migrations or change-log writes, while two instances of one store still do.
    @Test(arguments: TestBackend.available.filter { $0 == .postgres })
    func advisoryLocksAreTheStoresOwn(_ backend: TestBackend) async throws {
        try await withTestStore(backend) { store in
            try await withTestStore(backend) { other in
                let (one, sameStore, otherStore) = (try store.open(), try store.open(), try other.open())
                @Sendable func isFree(_ database: KizunaDatabase, _ lock: AdvisoryLock, _ name: String?) async throws -> Bool {
                    try await database.withSession { db in
                        try await db.inTransaction(immediate: true) { db in
                            try await db.raw("SELECT pg_try_advisory_xact_lock(\(lock.keys(name))) AS locked").first()?
                                .decode(column: "locked", as: Bool.self)
                        }
                    } ?? false
                }
                // An index's lock is the store's and the index's: the same name in another store is another lock.
                let locks: [(AdvisoryLock, String?)] = [
                    (.migration, nil), (.bootstrapToken, nil), (.changeOrder, nil), (.associationFile, nil), (.indexBuild, "ix_a"),
                ]
                for (lock, name) in locks {
                    try await one.withSession { db in
                        try await db.inTransaction(immediate: true) { db in
                            try await lock.hold(on: db, name)
                            #expect(try await isFree(sameStore, lock, name) == false, "\(lock) is one lock for every instance of a store")
                            #expect(try await isFree(otherStore, lock, name), "\(lock) of another schema is another lock")
                            if name != nil { #expect(try await isFree(sameStore, lock, "ix_b"), "another index is another lock") }
                        }
                    }
                }
                for database in [one, sameStore, otherStore] { await database.shutdown() }
            }
        }
    }

    @Test func theSQLiteStoreIsReadableByItsOwnerOnly() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kizuna-perm-\(UUID().uuidString)/data")
        defer { try? FileManager.default.removeItem(at: directory.deletingLastPathComponent()) }
        let database = try KizunaDatabase(location: .sqlite(dataDirectory: directory.path))
        try await MigrationRunner(database: database).migrate()
        func mode(_ path: String) throws -> Int {
            try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
        }
        #expect(try mode(directory.path) == 0o700)
        let file = directory.appendingPathComponent("kizuna.sqlite").path
        for path in [file, file + "-wal", file + "-shm"] where FileManager.default.fileExists(atPath: path) {
            #expect(try mode(path) == 0o600, "\(path)")
        }
        #expect(FileManager.default.fileExists(atPath: file + "-wal"))
        await database.shutdown()
    }

    @Test func aStoreOthersCanReadIsReportedAtStart() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kizuna-perm-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("kizuna.sqlite").path
        #expect(FileManager.default.createFile(atPath: file, contents: nil, attributes: [.posixPermissions: 0o644]))
        let (logger, records) = RecordingLogHandler.logger()
        let database = try KizunaDatabase(location: .sqlite(path: file), logger: logger)
        await database.shutdown()
        #expect(records.messages(at: .warning).contains { $0.contains("readable by other users") })
        // Left as it was: the operator decides.
        #expect(try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions] as? Int == 0o644)
    }

    @Test func aSecondServerOnTheSameSQLiteStoreIsRefused() async throws {
        try await withTestStore(.sqlite) { store in
            var configuration = KizunaConfiguration(port: 0, database: store.location, logLevel: .warning) { _ in }
            configuration.passwordParameters = .init(logN: 10, r: 8, p: 1)
            var first: ServerParts? = try await ServerParts(configuration: configuration)
            do {
                _ = try await ServerParts(configuration: configuration)
                Issue.record("the second server started")
            } catch let error as KizunaError {
                #expect(
                    error.code == .unavailable && error.message.contains("Another kizuna serve (pid \(ProcessInfo.processInfo.processIdentifier))"))
            }
            // CLI store commands keep working beside the server.
            let cli = try store.open()
            #expect(try await MigrationRunner(database: cli).status().pending.count == CoreMigrations.all.count)
            await cli.shutdown()
            // Once the first is gone, the store is free.
            await first?.database.shutdown()
            first = nil
            let second = try await ServerParts(configuration: configuration)
            await second.database.shutdown()
        }
    }

    /// PostgreSQL taken away under a running server (through a proxy the test cuts), then given back; under a deadline
    /// that names the step a stall happened at (``withDeadline(_:_:)``).
    @Test(arguments: TestBackend.available.filter { $0 == .postgres })
    func aStoreThatCannotBeReachedIs503AndTheServerRecovers(_ backend: TestBackend) async throws {
        try await withDeadline(.seconds(180)) { step in try await Self.cutAndRestoreTheStore(backend, step: step) }
    }

    private static func cutAndRestoreTheStore(_ backend: TestBackend, step: TestStep) async throws {
        let (proxy, proxyURL) = try await TCPProxy.postgres()
        try await withTestStore(backend) { store in
            guard case .postgres(_, let schema) = store.location else { return }
            let location = DatabaseLocation.postgres(url: proxyURL, schema: schema)
            let (tokens, announce) = AsyncStream.makeStream(of: AdminCredential.self)
            var configuration = KizunaConfiguration(port: 0, database: location, logLevel: .debug) { announce.yield($0) }
            configuration.logHandler = step.logHandler  // what the server did, in the message should the deadline pass
            let parts = try await ServerParts(configuration: configuration)
            let readiness = parts.readiness
            try await parts.application().test(.live) { client in
                step.reached("waiting for readiness")
                #expect(await readiness.settled() == .ready)
                step.reached("waiting for the bootstrap token")
                var iterator = tokens.makeAsyncIterator()
                let token = try #require(await iterator.next()).token
                let admin: HTTPFields = [.authorization: "Bearer \(token)"]
                step.reached("listing apps before the cut")
                #expect(try await client.execute(uri: "/v1/admin/apps", method: .get, headers: admin).status == .ok)

                step.reached("cutting the proxy")
                await proxy.cut()
                step.reached("asking while cut")
                let down = try await client.execute(uri: "/v1/admin/apps", method: .get, headers: admin)
                #expect(down.status == .serviceUnavailable && down.headers[.retryAfter] == "5")
                let error = try WireFormat.decoder().decode(ErrorEnvelope.self, from: Data(down.body.readableBytesView)).kizunaError
                #expect(error.code == .storeUnavailable && !error.message.contains("PSQL"))
                let health = try await client.execute(uri: "/health/ready", method: .get)
                #expect(health.status == .serviceUnavailable && String(buffer: health.body).contains("store_unavailable"))
                #expect(try await client.execute(uri: "/health/live", method: .get).status == .ok)

                step.reached("restoring the proxy")
                try await proxy.restore()
                // The pool drops the dead connections and opens new ones; the first requests may still meet a dead one.
                step.reached("asking after the restore")
                var recovered = false
                for _ in 0..<20 where !recovered {
                    recovered = try await client.execute(uri: "/v1/admin/apps", method: .get, headers: admin).status == .ok
                }
                #expect(recovered)
                #expect(try await client.execute(uri: "/health/ready", method: .get).status == .ok)
                step.reached("shutting the server down")
            }
            step.reached("dropping the test schema")
        }
        step.reached("cutting the proxy at the end")
        await proxy.cut()
    }

    @Test(arguments: TestBackend.available)
    func appChangesThatWouldBreakTheAssociationFileAreRefused(_ backend: TestBackend) async throws {
        try await withTestServer(backend) { server in
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            // Fill the file to just under the limit with one app's link rules (binary search on their count).
            func settings(_ count: Int) -> String {
                let rule = (0..<count).map { #"{"/":"/\#(String(repeating: "p", count: 200))/\#($0)/*"}"# }
                return #"{"appLinks":[\#(rule.joined(separator: ","))]}"#
            }
            var (fits, tooMany) = (0, 2000)
            while tooMany - fits > 1 {
                let middle = (fits + tooMany) / 2
                let put = try await server.send(.put, "/v1/admin/apps/shop/associated-domains", json: settings(middle))
                if put.status == .ok { fits = middle } else { tooMany = middle }
            }
            #expect(try await server.send(.put, "/v1/admin/apps/shop/associated-domains", json: settings(fits)).status == .ok)
            let before = try await server.send(.get, "/.well-known/apple-app-site-association", authorized: false)
            #expect(before.status == .ok && before.body.readableBytes > 120_000)

            // One more Apple app would push the file over 128 KB: refused, naming the size; the file stays as it was.
            var bigger = ""
            for suffix in 0..<40 where bigger.isEmpty {
                let app = #"{"id":"app-\#(suffix)","name":"App","platform":"ios","bundleId":"com.example.app\#(suffix)","teamId":"ABCDE12345"}"#
                let created = try await server.send(.post, "/v1/admin/apps", json: app)
                if created.status != .created { bigger = created.text }
            }
            let refusal = try WireFormat.decoder().decode(ErrorEnvelope.self, from: Data(bigger.utf8)).kizunaError
            #expect(refusal.code == .validationFailed && refusal.message.contains("bytes") && refusal.message.contains("131072"))
            let after = try await server.send(.get, "/.well-known/apple-app-site-association", authorized: false)
            #expect(after.status == .ok && after.body.readableBytes <= 131_072)

            // A store that holds an over-limit file anyway (written behind the server's back): the last good file is
            // served, never a 4xx.
            let good = after.body
            let huge =
                #"{"appLinks":[\#(Array(repeating: #"{"/":"/\#(String(repeating: "q", count: 300))/*"}"#, count: 600).joined(separator: ","))]}"#
            try await server.database.raw("UPDATE associated_domain_settings SET body = \(bind: huge) WHERE app_id = 'shop'").run()
            let served = try await server.send(.get, "/.well-known/apple-app-site-association", authorized: false)
            #expect(served.status == .ok && served.body == good)
        }
    }

    @Test func anUnknownAppIs404NotAnEmptyDocument() async throws {
        try await withTestServer { server in
            for kind in ["config", "gate"] {
                for path in ["/v1/admin/apps/nope/\(kind)", "/v1/admin/apps/nope/\(kind)/versions", "/v1/admin/apps/nope/\(kind):diff?from=0"] {
                    let response = try await server.send(.get, path)
                    #expect(response.status == .notFound && response.error?.field == "app", "\(path)")
                }
                let publish = try await server.send(
                    .post, "/v1/admin/apps/nope/\(kind):publish", json: #"{"document":{}}"#, headers: [.ifMatch: "*"])
                #expect(publish.status == .notFound)
            }
        }
    }

    @Test func deeplyNestedDocumentsAreRefusedAtPublish() async throws {
        try await withTestServer { server in
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            let deep = String(repeating: "[", count: 400) + String(repeating: "]", count: 400)
            let body = #"{"document":{"parameters":{"p":{"defaultValue":\#(deep)}}}}"#
            let refused = try await server.send(.post, "/v1/admin/apps/shop/config:publish", json: body, headers: [.ifMatch: "*"])
            #expect(refused.status == .badRequest && refused.error?.code == .validationFailed)
            #expect(refused.error?.field?.hasPrefix("$.parameters.p.defaultValue[0]") == true)
            #expect(try await server.send(.get, "/v1/admin/apps/shop/config").decode(PublishedDocument.self).version == 0)
        }
    }
}
