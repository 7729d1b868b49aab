import Foundation
import KizunaClient
import KizunaCore
import KizunaServer
import SQLKit
import Subprocess
import Testing

/// Kills a real `kizuna serve` with SIGKILL while a schema job fills a new field's default into a large table, starts
/// it again on the same store, and checks every row: the job resumes from its last committed batch and finishes,
/// nothing lost or left unfilled.
@Suite("schema jobs survive kill -9")
struct SchemaJobKillTests {
    static let rows = 200_000

    static let items = "type Item @model @auth(rules: [{ allow: private }]) {\n  name: String!\n}\n"
    static let itemsSeen = items.replacingOccurrences(
        of: "  name: String!\n", with: "  name: String!\n  seenAt: DateTime! @default(value: \"2025-01-31T09:00:00Z\")\n")
    static let seenAtMillis: Int64 = 1_738_314_000_000

    @Test func killMidBackfillThenRestartFinishesWithEveryRowFilled() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kizuna-job-kill-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        // Small batches, so the backfill of 200,000 rows is still under way when the test looks.
        let arguments = ["serve", "--port", "0", "--data-dir", directory.path, "--batch-size", "100"]

        let table = DataTables.table(app: "shop", model: "Item")
        let ((token, database), killed) = try await ServeProcess.run(arguments) { first in
            let port = try #require(await first.port())
            // The one-time admin token is printed once the new store is ready.
            let token = try #require(
                await first.find { (line: String) -> String? in line.split(separator: " ").first { $0.hasPrefix("kza_") }.map(String.init) })
            let admin = AdminClient(server: URL(string: "http://127.0.0.1:\(port)")!, token: token)
            _ = try await admin.createApp(NewApp(id: "shop", name: "Shop", platform: .ios, bundleId: "com.example.shop", teamId: "ABCDE12345"))
            _ = try await admin.publish(.schema, app: "shop", document: SchemaDocument.document(sdl: Self.items), message: nil, expecting: .any)

            // 200,000 rows written beside the running server (WAL lets both in), then the additive change.
            let database = try KizunaDatabase(location: .sqlite(dataDirectory: directory.path))
            try await database.transaction { db in
                try await db.raw(
                    """
                    INSERT INTO \(ident: table) ("id", "name", "createdAt", "updatedAt", "_version", "_seq")
                    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(unsafeRaw: String(Self.rows)))
                    SELECT 'item-' || i, 'Item ' || i, 1700000000000 + i, 1700000000000 + i, 1, 1 FROM n
                    """
                ).run()
            }
            let published = try await admin.publish(
                .schema, app: "shop", document: SchemaDocument.document(sdl: Self.itemsSeen), message: nil, expecting: .any)

            // Wait until the backfill has committed some batches but not all, then kill the server outright.
            while true {
                let job = try #require(try await admin.schemaJobs(app: "shop").first)
                #expect(job.kind == "backfill" && job.schemaVersion == published.version)
                try #require(job.state != "done", "the backfill finished before the test could interrupt it")
                if job.done > 0 { break }
            }
            await first.stop(.kill)
            return (token, database)
        }
        #expect(killed == .signaled(SIGKILL))

        // Killed mid-way: the job is still running under the dead server's lease, and the rows its committed batches
        // filled are exactly what its progress says.
        let midway = try #require(try await Self.job(database))
        let unfilled = try await Self.count(database, table, where: "\(ident: "seenAt") IS NULL")
        #expect(midway.state == "running" && midway.done > 0 && unfilled > 0)
        #expect(midway.done == Int64(Self.rows - unfilled), "every committed batch is counted once, and nothing else is")

        // Started again on the same store, the server takes the job over and finishes it.
        let (_, stopped) = try await ServeProcess.run(arguments) { second in
            let outcome = await second.find { (line: String) -> Bool? in
                line.contains("Schema job finished") ? true : line.contains("Schema job failed") ? false : nil
            }
            #expect(outcome == true, "\(second.seen.suffix(20).joined(separator: "\n"))")
            let restartedPort = try #require(await second.port())
            let restarted = AdminClient(server: URL(string: "http://127.0.0.1:\(restartedPort)")!, token: token)
            let finished = try #require(try await restarted.schemaJobs(app: "shop").first)
            #expect(finished.id == midway.id && finished.state == "done" && finished.attempts == 2 && finished.error == nil)
            await second.stop(.terminate)
        }
        #expect(stopped == .exited(0))

        #expect(try await Self.count(database, table) == Self.rows)
        #expect(try await Self.count(database, table, where: "\(ident: "seenAt") = \(bind: Self.seenAtMillis)") == Self.rows)
        let distinct = try await database.raw("SELECT COUNT(DISTINCT \(ident: "id")) AS n FROM \(ident: table)").first()?.decode(
            column: "n", as: Int.self)
        #expect(distinct == Self.rows)
        await database.shutdown()
    }

    static func count(_ database: KizunaDatabase, _ table: String, where condition: SQLQueryString = "1 = 1") async throws -> Int {
        try await database.raw("SELECT COUNT(*) AS n FROM \(ident: table) WHERE \(condition)").first()?.decode(column: "n", as: Int.self) ?? -1
    }

    /// The one job, as the store holds it.
    static func job(_ database: KizunaDatabase) async throws -> (id: Int64, state: String, done: Int64)? {
        guard let row = try await database.raw("SELECT id, state, done FROM data_jobs").first() else { return nil }
        return (
            try row.decode(column: "id", as: Int64.self), try row.decode(column: "state", as: String.self),
            try row.decode(column: "done", as: Int64.self)
        )
    }
}
