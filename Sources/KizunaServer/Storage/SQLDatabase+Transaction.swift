import SQLKit

extension SQLDatabase {
    /// Runs `body` inside `BEGIN`…`COMMIT` on this (pinned) connection, rolling back when it throws.
    /// - Parameter immediate: take SQLite's write lock at once (`BEGIN IMMEDIATE`); ignored on PostgreSQL.
    func inTransaction<R>(immediate: Bool, _ body: (any SQLDatabase) async throws -> R) async throws -> R {
        try await raw(SQLQueryString(immediate && dialect.name == "sqlite" ? "BEGIN IMMEDIATE" : "BEGIN")).run()
        do {
            let result = try await body(self)
            try await raw("COMMIT").run()
            return result
        } catch {
            try? await raw("ROLLBACK").run()
            throw error
        }
    }
}
