import Foundation
import PostgresKit
import SQLiteKit

/// The store as Kizuna opens it (`Sources/KizunaServer/Storage/KizunaDatabase.swift`), and nothing more: an async-kit
/// pool of `maxConnectionsPerEventLoop` connections on each of NIO's singleton event loops, SQLite through sqlite-nio
/// on the singleton thread pool with Kizuna's pragmas, PostgreSQL through postgres-kit. Writers on SQLite queue in
/// this process first, as Kizuna's `WriteGate` makes them, and transactions are `BEGIN IMMEDIATE` there.
///
/// What is copied is copied on purpose: the peer measures the drivers as Kizuna drives them, so a difference in the
/// ratio is Kizuna's own work (HTTP, GraphQL, sessions, rules), not a differently tuned pool.
final class PeerStore: Sendable {
    enum Engine: String, Sendable {
        case sqlite, postgres
    }

    let engine: Engine
    /// Connections the pool may open: per event loop times the event loops.
    let connections: Int
    private let pools: Pools
    private let writeGate: WriteGate?
    private let logger: Logger

    /// async-kit's pool synchronizes itself (a lock and one pool per event loop) but is not marked `Sendable`; Kizuna
    /// imports AsyncKit with `@preconcurrency` for the same reason.
    private enum Pools: @unchecked Sendable {
        case sqlite(EventLoopGroupConnectionPool<SQLiteStoreSource>)
        case postgres(EventLoopGroupConnectionPool<PostgresConnectionSource>)
    }

    /// Opens a pool on `database`: a `postgres://` or `postgresql://` URL, else the path of an SQLite file that exists.
    init(database: String, connectionsPerEventLoop: Int, logger: Logger) throws {
        self.logger = logger
        let group = MultiThreadedEventLoopGroup.singleton
        var loops = 0
        for _ in group.makeIterator() { loops += 1 }
        connections = connectionsPerEventLoop * loops
        let scheme = database.split(separator: ":", maxSplits: 1).first.map { $0.lowercased() }
        if scheme == "postgres" || scheme == "postgresql" {
            engine = .postgres
            writeGate = nil
            pools = .postgres(
                EventLoopGroupConnectionPool(
                    source: PostgresConnectionSource(sqlConfiguration: try SQLPostgresConfiguration(url: database)),
                    maxConnectionsPerEventLoop: connectionsPerEventLoop,
                    pruneInterval: nil,
                    logger: logger,
                    on: group
                ))
        } else {
            // Kizuna creates the store; the peer only ever writes into tables Kizuna made.
            guard FileManager.default.fileExists(atPath: database) else { throw PeerError("No SQLite store at \(database).") }
            engine = .sqlite
            writeGate = WriteGate()
            pools = .sqlite(
                EventLoopGroupConnectionPool(
                    source: SQLiteStoreSource(path: database),
                    maxConnectionsPerEventLoop: connectionsPerEventLoop,
                    pruneInterval: nil,
                    logger: logger,
                    on: group
                ))
        }
    }

    /// Closes every connection.
    func shutdown() async {
        switch pools {
        case .sqlite(let pool): try? await pool.shutdownAsync()
        case .postgres(let pool): try? await pool.shutdownAsync()
        }
    }

    /// Runs `body` on one connection checked out of the pool, as each statement Kizuna runs outside a transaction is.
    func withSession<R: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        switch pools {
        case .sqlite(let pool): try await checkOut(pool, as: { $0.sql(queryLogLevel: .trace) }, body)
        case .postgres(let pool): try await checkOut(pool, as: { $0.sql(queryLogLevel: .trace) }, body)
        }
    }

    /// Runs `body` in `BEGIN` (SQLite: `BEGIN IMMEDIATE`) … `COMMIT` on one connection, after this process's earlier
    /// SQLite writers: Kizuna's `KizunaDatabase.transaction`.
    func transaction<R: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await serializingWrites {
            try await withSession { db in
                try await db.raw(SQLQueryString(db.dialect.name == "sqlite" ? "BEGIN IMMEDIATE" : "BEGIN")).run()
                do {
                    let result = try await body(db)
                    try await db.raw("COMMIT").run()
                    return result
                } catch {
                    try? await db.raw("ROLLBACK").run()
                    throw error
                }
            }
        }
    }

    /// Runs `body` (an autocommitted write) on one connection, after this process's earlier SQLite writers.
    func write<R: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await serializingWrites { try await withSession(body) }
    }

    private func serializingWrites<R>(_ body: () async throws -> R) async throws -> R {
        guard let writeGate else { return try await body() }
        return try await writeGate.run(body)
    }

    /// Kizuna's `checkOut`: the closure runs as a task on the connection's event loop.
    private func checkOut<Source: ConnectionPoolSource, R: Sendable>(
        _ pool: EventLoopGroupConnectionPool<Source>,
        as sql: @escaping @Sendable (Source.Connection) -> any SQLDatabase,
        _ body: @escaping @Sendable (any SQLDatabase) async throws -> R
    ) async throws -> R {
        try await pool.withConnection(logger: logger) { connection in
            let database = sql(connection)
            return connection.eventLoop.makeFutureWithTask { try await body(database) }
        }.get()
    }
}

/// Kizuna's `SQLiteStoreSource`: WAL, foreign keys, a busy timeout, `synchronous = NORMAL`.
struct SQLiteStoreSource: ConnectionPoolSource, Sendable {
    let path: String

    func makeConnection(logger: Logger, on eventLoop: any EventLoop) -> EventLoopFuture<SQLiteConnection> {
        SQLiteConnection.open(storage: .file(path: path), threadPool: .singleton, logger: logger, on: eventLoop).flatMap { connection in
            eventLoop.makeFutureWithTask {
                do {
                    for pragma in [
                        "PRAGMA busy_timeout = 10000", "PRAGMA journal_mode = WAL", "PRAGMA foreign_keys = ON", "PRAGMA synchronous = NORMAL",
                    ] {
                        _ = try await connection.query(pragma)
                    }
                    return connection
                } catch {
                    try? await connection.close()
                    throw error
                }
            }
        }
    }
}

/// Kizuna's `WriteGate`: one SQLite writer of this process at a time, in arrival order, the others suspended, so
/// waiting writers never hold sqlite-nio's threads in SQLite's busy handler.
actor WriteGate {
    private var isHeld = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    nonisolated func run<R>(_ body: () async throws -> R) async throws -> R {
        await enter()
        do {
            let result = try await body()
            await leave()
            return result
        } catch {
            await leave()
            throw error
        }
    }

    private func enter() async {
        guard isHeld else {
            isHeld = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func leave() {
        if waiting.isEmpty {
            isHeld = false
        } else {
            waiting.removeFirst().resume()
        }
    }
}

/// A failure the peer explains itself.
struct PeerError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
