import Foundation
import KizunaCore
import Synchronization
import Testing

@testable import KizunaServer

@Suite("DocumentRepository contract")
struct DocumentRepositoryContractTests {
    /// Counts the commits a repository reports.
    final class Commits: Sendable {
        let count = Mutex(0)
        func poke() { count.withLock { $0 += 1 } }
    }

    static func body(_ n: Int) -> JSONValue {
        ["parameters": ["welcome": ["defaultValue": .string("hello \(n)")]]]
    }

    static func publish(
        _ documents: DocumentSQLRepository, _ n: Int, kind: DocumentKind = .config, expected: ExpectedVersion = .any, message: String? = nil,
        rollbackOf: Int64? = nil, retention: Int = 100
    ) async throws -> PublishedDocument {
        try await documents.publish(
            app: "my-app", kind: kind, document: body(n), expected: expected, author: "ci", message: message, rollbackOf: rollbackOf,
            retention: retention)
    }

    @Test(arguments: TestBackend.available)
    func publishWithTheExpectedVersionOrAConflict(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            _ = try await AppSQLRepository(database: database).create(AppRepositoryContractTests.sample)
            let commits = Commits()
            let documents = DocumentSQLRepository(database: database, didCommit: { commits.poke() })
            #expect(try await documents.current(app: "my-app", kind: .config) == .initial)
            #expect(try await documents.find(app: "my-app", kind: .config, version: 1) == nil)

            let first = try await Self.publish(documents, 1, message: "first")
            #expect(first.version == 1 && first.document == Self.body(1) && first.author == "ci" && first.message == "first")
            #expect(try await documents.current(app: "my-app", kind: .config) == first)
            let second = try await Self.publish(documents, 2, expected: .version(1))
            #expect(second.version == 2 && commits.count.withLock { $0 } == 2)

            // A publish based on an older version is refused and changes nothing.
            let stale = await #expect(throws: KizunaError.self) { try await Self.publish(documents, 3, expected: .version(1)) }
            #expect(stale?.code == .preconditionFailed && stale?.field == "If-Match")
            #expect(try await documents.current(app: "my-app", kind: .config) == second)
            #expect(commits.count.withLock { $0 } == 2)

            // Each kind has its own versions; an unknown app has none.
            #expect(try await Self.publish(documents, 9, kind: .gate).version == 1)
            #expect(try await documents.current(app: "my-app", kind: .config).version == 2)
            let missing = await #expect(throws: KizunaError.self) {
                try await documents.publish(
                    app: "ghost", kind: .config, document: Self.body(1), expected: .any, author: "ci", message: nil, rollbackOf: nil, retention: 10)
            }
            #expect(missing?.code == .notFound)
        }
    }

    @Test(arguments: TestBackend.available)
    func findAndHistoryPageNewestFirst(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            _ = try await AppSQLRepository(database: database).create(AppRepositoryContractTests.sample)
            let documents = DocumentSQLRepository(database: database)
            var published: [PublishedDocument] = []
            for n in 1...5 { published.append(try await Self.publish(documents, n, message: "v\(n)")) }
            let rollback = try await Self.publish(documents, 2, message: "back", rollbackOf: 2)

            #expect(try await documents.find(app: "my-app", kind: .config, version: 3) == published[2])
            #expect(try await documents.find(app: "my-app", kind: .gate, version: 3) == nil)
            let newest = try await documents.history(app: "my-app", kind: .config, before: nil, limit: 2)
            #expect(newest.map(\.version) == [6, 5])
            #expect(newest.first?.rollbackOf == 2 && newest.first?.message == "back" && newest.first?.publishedAt == rollback.publishedAt)
            let older = try await documents.history(app: "my-app", kind: .config, before: 5, limit: 10)
            #expect(older.map(\.version) == [4, 3, 2, 1] && older.map(\.message) == ["v4", "v3", "v2", "v1"])
            #expect(try await documents.history(app: "my-app", kind: .gate, before: nil, limit: 10).isEmpty)
        }
    }

    @Test(arguments: TestBackend.available)
    func retentionKeepsTheNewestVersions(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            _ = try await AppSQLRepository(database: database).create(AppRepositoryContractTests.sample)
            let documents = DocumentSQLRepository(database: database)
            for n in 1...5 { _ = try await Self.publish(documents, n, retention: 3) }
            #expect(try await documents.history(app: "my-app", kind: .config, before: nil, limit: 10).map(\.version) == [5, 4, 3])
            #expect(try await documents.find(app: "my-app", kind: .config, version: 2) == nil)
            #expect(try await documents.current(app: "my-app", kind: .config).version == 5)
            // Version numbers keep counting after pruning.
            #expect(try await Self.publish(documents, 6, expected: .version(5), retention: 3).version == 6)
        }
    }

    /// The app row is the per-app lock: of publishes racing with one expected version, exactly one goes through.
    @Test(arguments: TestBackend.available)
    func racingPublishesWithOneExpectedVersionPublishOnce(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            _ = try await AppSQLRepository(database: database).create(AppRepositoryContractTests.sample)
            let documents = DocumentSQLRepository(database: database)
            for round in 0..<5 {
                let current = try await documents.current(app: "my-app", kind: .config).version
                let outcomes = try await withThrowingTaskGroup(of: Bool.self) { group in
                    for n in 0..<3 {
                        group.addTask {
                            do {
                                _ = try await Self.publish(documents, round * 10 + n, expected: .version(current))
                                return true
                            } catch let error as KizunaError where error.code == .preconditionFailed {
                                return false
                            }
                        }
                    }
                    return try await group.reduce(into: [Bool]()) { $0.append($1) }
                }
                #expect(outcomes.filter { $0 }.count == 1)
                #expect(try await documents.current(app: "my-app", kind: .config).version == current + 1)
            }
        }
    }
}
