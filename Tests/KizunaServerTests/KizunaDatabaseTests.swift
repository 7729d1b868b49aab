import Foundation
import SQLKit
import Testing

@testable import KizunaServer

@Suite("KizunaDatabase")
struct KizunaDatabaseTests {
    /// More concurrent writers than sqlite-nio has threads: each must commit, none may time out on the busy handler.
    @Test(arguments: TestBackend.available)
    func manyConcurrentWritersAllCommit(_ backend: TestBackend) async throws {
        try await withTestStore(backend) { store in
            let database = try store.open()
            try await database.transaction { try await $0.raw("CREATE TABLE counters (id TEXT PRIMARY KEY, n INTEGER NOT NULL)").run() }
            try await database.transaction { try await $0.raw("INSERT INTO counters VALUES ('c', 0)").run() }
            let writers = 32
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<writers {
                    group.addTask {
                        try await database.transaction { db in
                            // Read, then write what was read plus one: any interleaving loses an increment.
                            let n = try await db.raw("SELECT n FROM counters WHERE id = 'c' \(unsafeRaw: backend == .postgres ? "FOR UPDATE" : "")")
                                .first()!.decode(column: "n", as: Int.self)
                            try await db.raw("UPDATE counters SET n = \(bind: n + 1) WHERE id = 'c'").run()
                        }
                    }
                }
                try await group.waitForAll()
            }
            let total = try await database.raw("SELECT n FROM counters WHERE id = 'c'").first()?.decode(column: "n", as: Int.self)
            #expect(total == writers)
            await database.shutdown()
        }
    }

    @Test(arguments: TestBackend.available)
    func failedTransactionLeavesNothingBehind(_ backend: TestBackend) async throws {
        struct Abort: Error {}
        try await withTestStore(backend) { store in
            let database = try store.open()
            try await database.transaction { try await $0.raw("CREATE TABLE t (id INTEGER PRIMARY KEY)").run() }
            await #expect(throws: Abort.self) {
                try await database.transaction { db in
                    try await db.raw("INSERT INTO t VALUES (1)").run()
                    throw Abort()
                }
            }
            let count = try await database.raw("SELECT COUNT(*) AS n FROM t").first()?.decode(column: "n", as: Int.self)
            #expect(count == 0)
            // The gate was released: the next writer gets through.
            try await database.transaction { try await $0.raw("INSERT INTO t VALUES (2)").run() }
            await database.shutdown()
        }
    }
}
