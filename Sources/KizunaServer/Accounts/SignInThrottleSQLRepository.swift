import SQLKit

/// ``SignInThrottleRepository`` over SQLite or PostgreSQL: the `sign_in_throttles` table.
struct SignInThrottleSQLRepository: SignInThrottleRepository {
    let database: KizunaDatabase

    func locks(of keys: [String]) async throws -> [Int64] {
        try await database.select().columns("key", "locked_until").from("sign_in_throttles")
            .where("key", .in, keys)
            .all()
            .compactMap { try $0.decode(column: "locked_until", as: Int64?.self) }
    }

    func recordFailures(
        of keys: [SignInThrottle.Key], counting count: @escaping @Sendable (SignInThrottle.Key, SignInThrottleCount?) -> SignInThrottleCount
    ) async throws {
        try await database.transaction { db in
            for key in keys {
                // FOR UPDATE: on PostgreSQL a concurrent failure on the same key waits here and counts after this one.
                let row = try await db.select().columns("failures", "locked_until", "updated_at").from("sign_in_throttles")
                    .where("key", .equal, SQLBind(key.value)).for(.update).first()
                let stored = try row.map { found in
                    SignInThrottleCount(
                        failures: try found.decode(column: "failures", as: Int.self),
                        lockedUntil: try found.decode(column: "locked_until", as: Int64?.self),
                        updatedAt: try found.decode(column: "updated_at", as: Int64.self))
                }
                let next = count(key, stored)
                if stored == nil {
                    try await db.insert(into: "sign_in_throttles").columns("key", "failures", "locked_until", "updated_at")
                        .values(SQLBind(key.value), SQLBind(next.failures), SQLBind(next.lockedUntil), SQLBind(next.updatedAt)).run()
                } else {
                    try await db.update("sign_in_throttles").set("failures", to: SQLBind(next.failures))
                        .set("locked_until", to: SQLBind(next.lockedUntil)).set("updated_at", to: SQLBind(next.updatedAt))
                        .where("key", .equal, SQLBind(key.value)).run()
                }
            }
        }
    }

    func clear(_ keys: [String]) async throws {
        try await database.transaction { db in try await db.delete(from: "sign_in_throttles").where("key", .in, keys).run() }
    }

    func prune(updatedBefore horizon: Int64) async throws {
        try await database.transaction { db in try await db.delete(from: "sign_in_throttles").where("updated_at", .lessThan, SQLBind(horizon)).run() }
    }
}
