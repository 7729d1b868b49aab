import Foundation
import KizunaTestSupport
import Logging
import SQLKit
import Testing

@testable import KizunaServer

/// The engines every repository and migration test runs against.
enum TestBackend: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case sqlite, postgres

    var testDescription: String { rawValue }

    /// `KIZUNA_TEST_DATABASE_URL`; CI sets it, and `.ci/run` shows how.
    static var postgresURL: String? {
        ProcessInfo.processInfo.environment["KIZUNA_TEST_DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The backends to run: PostgreSQL when configured, and always under CI (where a missing URL then fails loudly).
    /// Without it, ``PostgreSQLAvailability`` reports the PostgreSQL cases as skipped, with the reason.
    static var available: [TestBackend] {
        postgresURL != nil || ProcessInfo.processInfo.environment["CI"] == "true" ? [.sqlite, .postgres] : [.sqlite]
    }
}

/// A fresh, empty store for one test: a new SQLite file, or a new PostgreSQL schema dropped afterwards.
struct TestStore: Sendable {
    let location: DatabaseLocation
    let directory: URL
    private let dropSchema: String?

    /// Makes a fresh store, or cancels the test (reported as skipped, with the reason) when PostgreSQL is not configured.
    static func make(_ backend: TestBackend) async throws -> TestStore {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kizuna-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        switch backend {
        case .sqlite:
            return TestStore(location: .sqlite(dataDirectory: directory.path), directory: directory, dropSchema: nil)
        case .postgres:
            let url = try #require(TestBackend.postgresURL, "KIZUNA_TEST_DATABASE_URL must be set under CI; see .ci/run")
            let schema = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
            let admin = try KizunaDatabase(location: .postgres(url: url))
            try await admin.raw("CREATE SCHEMA \(ident: schema)").run()
            await admin.shutdown()
            return TestStore(location: .postgres(url: url, schema: schema), directory: directory, dropSchema: schema)
        }
    }

    /// Opens the store.
    func open() throws -> KizunaDatabase {
        try KizunaDatabase(location: location, maxConnections: 2, connectionWait: .seconds(60))  // a busy machine: see withTestServer
    }

    /// Opens the store, migrated to the latest schema.
    func openMigrated() async throws -> KizunaDatabase {
        let database = try open()
        try await MigrationRunner(database: database).migrate()
        return database
    }

    /// Removes the store.
    func remove() async {
        if let dropSchema, case .postgres(let url, _) = location, let admin = try? KizunaDatabase(location: .postgres(url: url)) {
            // A connection a test left open inside a transaction (a server cut off mid-query) would hold its locks
            // and make the drop wait forever: such leftovers are ended first.
            try? await admin.raw(
                """
                SELECT pg_terminate_backend(l.pid) FROM pg_locks l
                JOIN pg_class c ON c.oid = l.relation JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = \(bind: dropSchema) AND l.pid <> pg_backend_pid()
                """
            ).run()
            try? await admin.withSession { db in
                try await db.raw("SET lock_timeout = '30s'").run()
                try await db.raw("DROP SCHEMA \(ident: dropSchema) CASCADE").run()
            }
            await admin.shutdown()
        }
        try? FileManager.default.removeItem(at: directory)
    }
}

/// Runs `body` with a fresh, unmigrated store of `backend`, removing it afterwards; in a ``ServerSlots`` slot.
func withTestStore(_ backend: TestBackend, _ body: (TestStore) async throws -> Void) async throws {
    try await ServerSlots.withSlot {
        let store = try await TestStore.make(backend)
        do {
            try await body(store)
        } catch {
            await store.remove()
            throw error
        }
        await store.remove()
    }
}

/// Runs `body` with a fresh store of `backend` migrated to the latest schema, closing and removing it afterwards.
func withMigratedStore(_ backend: TestBackend, _ body: (KizunaDatabase, TestStore) async throws -> Void) async throws {
    try await withTestStore(backend) { store in
        let database = try await store.openMigrated()
        do {
            try await body(database, store)
        } catch {
            await database.shutdown()
            throw error
        }
        await database.shutdown()
    }
}

/// Says in the test report whether the PostgreSQL cases of the storage suites ran.
@Suite("PostgreSQL backend")
struct PostgreSQLAvailability {
    @Test(.enabled(if: TestBackend.postgresURL != nil, "KIZUNA_TEST_DATABASE_URL is not set: every PostgreSQL case was left out"))
    func serverAnswers() async throws {
        let database = try KizunaDatabase(location: .postgres(url: try #require(TestBackend.postgresURL)))
        let one = try await database.raw("SELECT 1 AS one").first()?.decode(column: "one", as: Int.self)
        await database.shutdown()
        #expect(one == 1)
    }
}

extension TCPProxy {
    /// A proxy to the test PostgreSQL server, and its URL through the proxy (the same database and credentials).
    static func postgres() async throws -> (proxy: TCPProxy, url: String) {
        let url = try #require(TestBackend.postgresURL)
        let target = try #require(URLComponents(string: url))
        let proxy = try await TCPProxy.start(to: target.host ?? "127.0.0.1", port: target.port ?? 5432)
        var viaProxy = target
        viaProxy.port = proxy.port
        return (proxy, try #require(viaProxy.string))
    }
}
