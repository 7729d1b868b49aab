import Foundation
import KizunaServer
import SQLKit
import Subprocess
import Testing

/// Kills a real `kizuna migrate` process mid-way through a data step over a large table, reruns it, and checks
/// every row: the checkpointed batches must leave nothing lost or done twice.
@Suite("kizuna migrate survives kill -9")
struct MigrationKillTests {
    static let rows = 200_000

    @Test func killMidwayThenRerunFinishesWithEveryRowIntact() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kizuna-kill-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }

        // A store at schema 1 holding a large apps table, so step 2 (the batched apps-bundle-key) has work to do.
        #expect(try await Self.kizuna(["migrate", "--to", "1", "--data-dir", directory.path]) == .exited(0))
        let database = try KizunaDatabase(location: .sqlite(dataDirectory: directory.path))
        try await database.transaction { db in
            for start in stride(from: 0, to: Self.rows, by: 500) {
                let values = (start..<min(start + 500, Self.rows)).map {
                    String(format: "('app-%06d', 'App %d', 'ios', 'com.Example.App%d', 'ABCDE12345', NULL, 0, 0)", $0, $0, $0)
                }.joined(separator: ",")
                try await db.raw("INSERT INTO apps VALUES \(unsafeRaw: values)").run()
            }
        }

        // Kill the child as soon as it reports its third committed batch.
        let killed = try await Self.kizuna(["migrate", "--data-dir", directory.path, "--batch-size", "500"], signal: .kill) {
            $0.filter { $0.hasPrefix("migrate:") }.count == 3
        }
        #expect(killed == .signaled(SIGKILL))
        let midway = try #require(try await MigrationRunner(database: database).status().pending.first)
        #expect(midway.name == "apps-bundle-key")
        let done = try #require(midway.done)
        #expect(done >= 1_500 && done < Self.rows, "killed mid-way, with at least the reported batches committed")

        let rerun = try await Self.kizuna(["migrate", "--data-dir", directory.path, "--batch-size", "5000"])
        #expect(rerun == .exited(0))
        #expect(try await MigrationRunner(database: database).status().needsMigration == false)

        let count = try await database.raw("SELECT COUNT(*) AS n FROM apps").first()?.decode(column: "n", as: Int.self)
        #expect(count == Self.rows)
        let wrong = try await database.raw("SELECT COUNT(*) AS n FROM apps WHERE bundle_key IS NULL OR bundle_key <> LOWER(bundle_id)")
            .first()?.decode(column: "n", as: Int.self)
        #expect(wrong == 0)
        let distinct = try await database.raw("SELECT COUNT(DISTINCT id) AS n FROM apps").first()?.decode(column: "n", as: Int.self)
        #expect(distinct == Self.rows)
        let leftovers = try await database.raw("SELECT COUNT(*) AS n FROM kizuna_migration_progress").first()?.decode(column: "n", as: Int.self)
        #expect(leftovers == 0)
        await database.shutdown()
    }

    @Test func serveStopsCleanlyOnSIGTERM() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kizuna-term-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        // The admin-token banner is printed once the store is migrated and the server is ready.
        let stopped = try await Self.kizuna(["serve", "--port", "0", "--data-dir", directory.path], signal: .terminate) {
            $0.contains { $0.contains("kza_") }
        }
        #expect(stopped == .exited(0))
        // SQLite removes the write-ahead log when the last connection closes cleanly.
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("kizuna.sqlite").path))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("kizuna.sqlite-wal").path))
    }

    /// Runs the `kizuna` binary built beside this test bundle; sends `signal` once the lines it printed so far satisfy
    /// `when`, and answers how it ended.
    static func kizuna(
        _ arguments: [String], signal: Subprocess.Signal = .kill, when: (([String]) -> Bool)? = nil
    ) async throws -> TerminationStatus {
        try await ServeProcess.run(arguments) { running in
            // Reads lines until `when` holds for those seen (then signals), or to the end of the output.
            if await running.find({ _ in when?(running.seen) == true ? true : nil }) != nil {
                await running.stop(signal)
            }
        }.status
    }
}
