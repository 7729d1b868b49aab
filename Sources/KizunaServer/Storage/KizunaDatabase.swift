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

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The store: a pool of SQLite or PostgreSQL connections behind one SQLKit interface.
///
/// Repositories are written once against `any SQLDatabase`. Each statement run on this value checks a connection
/// out of the pool; ``withSession(_:)`` pins one connection, and ``transaction(_:)`` runs a closure inside
/// `BEGIN`…`COMMIT` on a pinned connection, rolling back on error.
package final class KizunaDatabase: SQLDatabase, Sendable {
    /// Which engine serves the store.
    package enum Engine: String, Sendable {
        case sqlite, postgres
    }

    /// The engine.
    package let engine: Engine
    /// Where the store lives.
    package let location: DatabaseLocation
    package let logger: Logger
    private let pool: Pool
    private let eventLoopGroup: any EventLoopGroup
    private let inUse = Atomic<Int>(0)
    private let inUseGauge: Gauge
    private let waitTimer: Timer
    private let isShutDown = Atomic<Bool>(false)
    /// Queues this process's SQLite writers; `nil` on PostgreSQL, which has row locks.
    private let writeGate: WriteGate?
    /// Opens this store's SQLite connections and owns the threads their calls block; `nil` on PostgreSQL.
    private let sqliteSource: SQLiteStoreSource?
    /// How to open a dedicated PostgreSQL connection, such as the change feed's LISTEN connection.
    package let postgresConfiguration: PostgresConnection.Configuration?

    private enum Pool: Sendable {
        case sqlite(EventLoopGroupConnectionPool<SQLiteStoreSource>)
        case postgres(EventLoopGroupConnectionPool<TimedPostgresConnectionSource>)
    }

    /// Opens the store, creating the SQLite file and its directory if needed.
    ///
    /// Nothing is written to the store here beyond SQLite's file creation and WAL mode; schema work belongs to
    /// ``MigrationRunner``.
    /// - Parameters:
    ///   - location: Where the store lives.
    ///   - maxConnections: Connections per event loop.
    ///   - connectionWait: How long a query waits for a free connection before it fails with a timeout.
    ///   - logger: Logger for the pool and queries.
    ///   - eventLoopGroup: The event loops connections run on.
    /// - Throws: `KizunaError` when the directory cannot be created or the URL is invalid.
    // Swift 6.3.1's optimizer crashes on this initializer in release builds (an ownership error in CopyPropagation);
    // it runs once per process, so it is left unoptimized.
    @_optimize(none)
    package init(
        location: DatabaseLocation,
        maxConnections: Int = 4,
        connectionWait: Duration = .seconds(10),
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
            writeGate = WriteGate()
            postgresConfiguration = nil
            try Self.prepareSQLiteFile(path, logger: logger)
            // SQLite's calls block their thread, and a statement waiting on another process's write lock blocks it for
            // up to the busy timeout. On a shared pool (NIO's singleton has one thread per core) such waits would stall
            // every other connection's statements, the lock holder's COMMIT among them, and every other store of the
            // process; a thread per connection keeps a wait to the connection that waits.
            let source = SQLiteStoreSource(path: path, threads: maxConnections * eventLoopGroup.makeIterator().reduce(0) { count, _ in count + 1 })
            sqliteSource = source
            pool = .sqlite(
                EventLoopGroupConnectionPool(
                    source: source,
                    maxConnectionsPerEventLoop: maxConnections,
                    requestTimeout: TimeAmount(connectionWait),
                    pruneInterval: nil,
                    logger: logger,
                    on: eventLoopGroup
                )
            )
        case .postgres(let url, let schema):
            engine = .postgres
            writeGate = nil
            sqliteSource = nil
            var configuration: SQLPostgresConfiguration
            do {
                configuration = try SQLPostgresConfiguration(url: url)
            } catch {
                throw KizunaError(.badRequest, "The PostgreSQL URL is not valid: \(error)", field: "database-url")
            }
            if let schema { configuration.searchPath = [schema] }
            postgresConfiguration = configuration.coreConfiguration
            pool = .postgres(
                EventLoopGroupConnectionPool(
                    source: TimedPostgresConnectionSource(base: PostgresConnectionSource(sqlConfiguration: configuration)),
                    maxConnectionsPerEventLoop: maxConnections,
                    requestTimeout: TimeAmount(connectionWait),
                    pruneInterval: nil,
                    logger: logger,
                    on: eventLoopGroup
                )
            )
        }
    }

    /// Creates the data directory (0700) and an empty store file (0600) before SQLite opens it: the store holds
    /// password and token hashes, and SQLite gives its -wal and -shm files the main file's permissions. An existing
    /// store that others can read is left as it is, with a warning to `logger` (none without one).
    static func prepareSQLiteFile(_ path: String, logger: Logger?) throws {
        let files = FileManager.default
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent()
        // Created with their modes from the start (not chmod-ed after), so nobody can open them in between.
        if !files.fileExists(atPath: directory.path) {
            do {
                try files.createDirectory(at: directory.deletingLastPathComponent(), withIntermediateDirectories: true)
            } catch {
                throw KizunaError(.internalError, "Cannot create the data directory \(directory.path): \(error.localizedDescription)")
            }
            if mkdir(directory.path, 0o700) != 0, errno != EEXIST {
                throw KizunaError(.internalError, "Cannot create the data directory \(directory.path): \(String(cString: strerror(errno))).")
            }
        }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if descriptor >= 0 {
            close(descriptor)
        } else if errno != EEXIST {
            throw KizunaError(.internalError, "Cannot create the store file \(path): \(String(cString: strerror(errno))).")
        }
        guard let logger else { return }
        for item in [path, path + "-wal", path + "-shm"] where files.fileExists(atPath: item) {
            let mode = (try? files.attributesOfItem(atPath: item)[.posixPermissions] as? Int) ?? 0
            if mode & 0o044 != 0 {
                logger.warning(
                    "The store is readable by other users of this machine, and it holds password and token hashes; run chmod 600 on it",
                    metadata: ["path": "\(item)", "mode": "\(String(mode, radix: 8))"])
            }
        }
    }

    /// A store dropped without ``shutdown()`` (its owner threw on the way) still closes its connections and threads,
    /// in the background: left open, the pool would leak them, and debug builds trap on it.
    deinit {
        guard !isShutDown.load(ordering: .acquiring) else { return }
        let source = sqliteSource
        let release: @Sendable ((any Error)?) -> Void = { _ in source?.shutdownInBackground() }
        switch pool {
        case .sqlite(let pool): pool.shutdownGracefully(release)
        case .postgres(let pool): pool.shutdownGracefully(release)
        }
    }

    /// Closes every connection. Call once, after the last use.
    package func shutdown() async {
        guard !isShutDown.exchange(true, ordering: .acquiringAndReleasing) else { return }
        switch pool {
        case .sqlite(let pool): try? await pool.shutdownAsync()
        case .postgres(let pool): try? await pool.shutdownAsync()
        }
        await sqliteSource?.shutdown()  // after the pool: its connections close on the source's threads
    }

    // MARK: SQLDatabase

    package var eventLoop: any EventLoop { eventLoopGroup.any() }

    package var dialect: any SQLDialect {
        switch engine {
        case .sqlite: SQLiteDialect()
        case .postgres: PostgresDialect()
        }
    }

    package var queryLogLevel: Logger.Level? { .trace }

    package func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) -> EventLoopFuture<Void> {
        eventLoop.makeFutureWithTask { try await self.execute(sql: query, onRow) }
    }

    package func execute(sql query: any SQLExpression, _ onRow: @escaping @Sendable (any SQLRow) -> Void) async throws {
        Self.statementCounter?.increment()
        try await withSession { try await $0.execute(sql: query, onRow) }
    }

    /// Runs `closure` with one connection checked out of the pool for its whole duration.
    package func withSession<R: Sendable>(_ closure: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        switch pool {
        case .sqlite(let pool): try await checkOut(pool, as: { $0.connection.sql(queryLogLevel: .trace) }, closure)
        case .postgres(let pool): try await checkOut(pool, as: { $0.sql(queryLogLevel: .trace) }, closure)
        }
    }

    /// Checks a connection out of `pool` for `closure`, recording the wait and the connections in use.
    private func checkOut<Source: ConnectionPoolSource, R: Sendable>(
        _ pool: EventLoopGroupConnectionPool<Source>,
        as sql: @escaping @Sendable (Source.Connection) -> any SQLDatabase,
        _ closure: @escaping @Sendable (any SQLDatabase) async throws -> R
    ) async throws -> R {
        let requested = ContinuousClock.now
        return try await pool.withConnection(logger: logger) { connection in
            // Wrapped here, so the task below holds only a Sendable database, not the pool's connection type.
            let database = sql(connection)
            return connection.eventLoop.makeFutureWithTask {
                self.waitTimer.recordNanoseconds(Int64((ContinuousClock.now - requested) / .nanoseconds(1)))
                self.inUseGauge.record(self.inUse.add(1, ordering: .relaxed).newValue)
                defer { self.inUseGauge.record(self.inUse.subtract(1, ordering: .relaxed).newValue) }
                return try await closure(database)
            }
        }.get()
    }

    /// Runs `body` in a transaction on one pinned connection: committed when it returns, rolled back when it throws.
    ///
    /// Every write goes through here. On SQLite, writers of this process take turns (see ``WriteGate``) and the
    /// transaction takes the write lock at once (`BEGIN IMMEDIATE`), so only another process's writer can make it
    /// wait on the busy timeout. On PostgreSQL, read rows with `FOR UPDATE` when the write depends on them.
    package func transaction<R: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> R) async throws -> R {
        try await serializingWrites {
            try await withSession { try await $0.inTransaction(immediate: true, body) }
        }
    }

    /// Runs `body` after this process's earlier SQLite writers have finished; at once on PostgreSQL.
    /// For code that writes on a connection it already holds, such as ``MigrationRunner``.
    func serializingWrites<R>(_ body: () async throws -> R) async throws -> R {
        guard let writeGate else { return try await body() }
        return try await writeGate.run(body)
    }
}
