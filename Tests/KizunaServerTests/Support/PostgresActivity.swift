import Foundation
import SQLKit

@testable import KizunaServer

/// What the test PostgreSQL server's other sessions are doing, for a test request that got no answer: a transaction
/// waiting on a lock (and on whom), or one left open, says the store held the request up; none says the time went in
/// the test process.
enum PostgresActivity {
    /// Up to eight sessions that are not idle, the longest-running first, a line each; nil when the server cannot tell
    /// within ten seconds.
    static func snapshot() async -> String? {
        guard let url = TestBackend.postgresURL else { return nil }
        return await withTaskGroup(of: String?.self) { group in
            group.addTask { try? await read(url) }
            group.addTask {
                try? await Task.sleep(for: .seconds(10))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    private static func read(_ url: String) async throws -> String {
        let database = try KizunaDatabase(location: .postgres(url: url))
        do {
            let rows = try await database.raw(
                """
                SELECT pid, state, coalesce(wait_event_type || '/' || wait_event, '-') AS wait,
                  extract(epoch FROM now() - coalesce(xact_start, query_start))::float8 AS seconds,
                  pg_blocking_pids(pid)::text AS blockers, left(regexp_replace(query, '\\s+', ' ', 'g'), 90) AS query
                FROM pg_stat_activity
                WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend' AND state <> 'idle'
                ORDER BY seconds DESC NULLS LAST LIMIT 8
                """
            ).all()
            let lines = try rows.map { row in
                let seconds = try row.decode(column: "seconds", as: Double?.self) ?? 0
                let blockers = try row.decode(column: "blockers", as: String.self)
                return "pid \(try row.decode(column: "pid", as: Int.self)) \(try row.decode(column: "state", as: String?.self) ?? "?")"
                    + " \(String(format: "%.1f", seconds)) s, wait \(try row.decode(column: "wait", as: String.self))"
                    + (blockers == "{}" ? "" : ", blocked by \(blockers)") + ": \(try row.decode(column: "query", as: String?.self) ?? "")"
            }
            await database.shutdown()
            return lines.isEmpty ? "no PostgreSQL session busy" : "PostgreSQL sessions busy: " + lines.joined(separator: " | ")
        } catch {
            await database.shutdown()
            throw error
        }
    }
}
