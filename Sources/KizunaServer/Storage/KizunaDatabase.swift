@preconcurrency import AsyncKit
import Foundation
import KizunaCore
import Logging
import Metrics
import NIOCore
import NIOPosix
import PostgresKit
import SQLKit
import SQLiteKit
import Synchronization

/// The store: a pool of SQLite or PostgreSQL connections behind one SQLKit interface.
///
/// Repositories are written once against `any SQLDatabase`. Each statement run on this value checks a connection
/// out of the pool; ``withSession(_:)`` pins one connection, and ``transaction(_:)`` runs a closure inside
/// `BEGIN`…`COMMIT` on a pinned connection, rolling back on error.
public final class KizunaDatabase: SQLDatabase, Sendable {
    /// Which engine serves the store.
    public enum Engine: String, Sendable {
        case sqlite, postgres
    }

    /// The engine.
    public let engine: Engine
    /// Where the store lives.
    public let location: DatabaseLocation
    public let logger: Logger
    private let pool: Pool
    private let eventLoopGroup: any EventLoopGroup
    private let inUse = Atomic<Int>(0)
    private let inUseGauge: Gauge
    private let waitTimer: Timer
    private let isShutDown = Atomic<Bool>(false)

    private enum Pool: Sendable {
        case sqlite(EventLoopGroupConnectionPool<SQLiteStoreSource>)
        case postgres(EventLoopGroupConnectionPool<PostgresConnectionSource>)
    }

    /// Opens the store, creating the SQLite file and its directory if needed.
    ///
    /// Nothing is written to the store here beyond SQLite's file creation and WAL mode; schema work belongs to
    /// ``MigrationRunner``.
    /// - Parameters:
    ///   - location: Where the store lives.
    ///   - maxConnections: Connections per event loop.
    ///   - logger: Logger for the pool and queries.
    ///   - eventLoopGroup: The event loops connections run on.
    /// - Throws: `KizunaError` when the directory cannot be created or the URL is invalid.
    public init(
        location: DatabaseLocation,
        maxConnections: Int = 4,
        logger: Logger = Logger(label: "kizuna.db"),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) throws {
        self.location = location
        self.logger = logger
        self.eventLoopGroup = eventLoopGroup
        self.inUseGauge = Gauge(label: "kizuna_db_connections_in_use", dimensions: [])
        self.waitTimer = Timer(label: "kizuna_db_connection_wait_seconds", dimensions: [], preferredDisplayUnit: .seconds)
        switch location {
        case .sqlite(let path):
            engine = .sqlite
            let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            } catch {
                throw KizunaError(.internalError, "Cannot create the data directory \(directory.path): \(error.localizedDescription)")
            }
            pool = .sqlite(
                EventLoopGroupConnectionPool(
                    source: SQLiteStoreSource(path: path),
                    maxConnectionsPerEventLoop: maxConnections,
                    pruneInterval: nil,
                    logger: logger,
                    on: eventLoopGroup
                )
            )
        case .postgres(let url, let schema):
            engine = .postgres
            var configuration: SQLPostgresConfiguration
            do {
                configuration = try SQLPostgresConfiguration(url: url)
            } catch {
                throw KizunaError(.badRequest, "The PostgreSQL URL is not valid: \(error)", field: "database-url")
            }
            if let schema { configuration.searchPath = [schema] }
            pool = .postgres(
                EventLoopGroupConnectionPool(
                    source: PostgresConnectionSource(sqlConfiguration: configuration),
                    maxConnectionsPerEventLoop: maxConnections,
                    pruneInterval: nil,
                    logger: logger,
                    on: eventLoopGroup
                )
            )
        }
    }

    deinit {
        if !isShutDown.load(ordering: .acquiring) {
            switch pool {
            case .sqlite(let pool): pool.shutdown()
            case .postgres(let pool): pool.shutdown()
            }
        }
    }

    /// Closes every connection. Call once, after the last use.
    public func shutdown() async {
        guard !isShutDown.exchange(true, ordering: .acquiringAndReleasing) else { return }
        switch pool {
        case .sqlite(let pool): try? await pool.shutdownAsync()
        case .postgres(let pool): try? await pool.shutdownAsync()
        }
    }

    // MARK: SQLDatabase

    public var eventLoop: any EventLoop { eventLoopGroup.any() }

    public var dialect: any SQLDialect {
        switch engine {
        case .sqlite: SQLiteDialect()
        case .postgres: PostgresDialect()
        }
    }

    public var queryLogLevel: Logger.Level? { .trace }

    public func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
        eventLoop.makeFutureWithTask { try await self.execute(sql: query, onRow) }
    }

    public func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        try await withSession { try await $0.execute(sql: query, onRow) }
    }

    /// Runs `closure` with one connection checked out of the pool for its whole duration.
    public func withSession<R>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        let requested = ContinuousClock.now
        let logger = self.logger
        switch pool {
        case .sqlite(let pool):
            return try await pool.withConnection(logger: logger) { connection in
                connection.eventLoop.makeFutureWithTask {
                    try await self.measured(since: requested) {
                        try await closure(connection.sql(queryLogLevel: .trace))
                    }
                }
            }.get()
        case .postgres(let pool):
            return try await pool.withConnection(logger: logger) { connection in
                connection.eventLoop.makeFutureWithTask {
                    try await self.measured(since: requested) {
                        try await closure(connection.sql(queryLogLevel: .trace))
                    }
                }
            }.get()
        }
    }

    private func measured<R>(since requested: ContinuousClock.Instant, _ body: () async throws -> R) async throws -> R {
        let waited = ContinuousClock.now - requested
        waitTimer.recordNanoseconds(Int64(waited.components.seconds) * 1_000_000_000 + waited.components.attoseconds / 1_000_000_000)
        inUseGauge.record(inUse.add(1, ordering: .relaxed).newValue)
        defer { inUseGauge.record(inUse.subtract(1, ordering: .relaxed).newValue) }
        return try await body()
    }

    /// Runs `body` in a transaction on one pinned connection: committed when it returns, rolled back when it throws.
    ///
    /// On SQLite the transaction takes the write lock at once (`BEGIN IMMEDIATE`), so two writers queue on the
    /// busy timeout instead of failing to upgrade a read lock.
    public func transaction<R: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await withSession { try await $0.inTransaction(immediate: true, body) }
    }
}

/// Opens SQLite connections with the pragmas Kizuna relies on: WAL, foreign keys, a busy timeout.
struct SQLiteStoreSource: ConnectionPoolSource, Sendable {
    let path: String

    func makeConnection(logger: Logger, on eventLoop: any EventLoop) -> EventLoopFuture<SQLiteConnection> {
        SQLiteConnection.open(storage: .file(path: path), threadPool: .singleton, logger: logger, on: eventLoop).flatMap { connection in
            eventLoop.makeFutureWithTask {
                do {
                    // WAL lets readers run beside the one writer; it is persistent, so this only writes on first open.
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
