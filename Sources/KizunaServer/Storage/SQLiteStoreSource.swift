@preconcurrency import AsyncKit
import Foundation
import Logging
import NIOCore
import NIOPosix
import SQLiteNIO
import Synchronization

/// Opens a store's SQLite connections with the pragmas Kizuna relies on (WAL, foreign keys, a busy timeout), on
/// threads of the store's own.
///
/// SQLite's calls block their thread, and a statement waiting on another process's write lock blocks it for up to the
/// busy timeout. On a shared pool (NIO's singleton has one thread per core) such waits would stall every other
/// connection's statements, the lock holder's COMMIT among them, and every other store of the process; a thread per
/// connection keeps a wait to the connection that waits.
///
/// The threads stop only once every connection is closed, those still opening included: a connection opened after the
/// pool gave up waiting for it is closed by the pool later, on these threads, and one left unclosed traps in debug
/// builds.
final class SQLiteStoreSource: ConnectionPoolSource, Sendable {
    let path: String
    private let threads: NIOThreadPool
    /// Connections open or opening, and who waits for there to be none.
    private let live = Mutex<(count: Int, drained: [@Sendable () -> Void])>((0, []))

    /// Set once per connection, before the pool hands it out.
    static let pragmas = ["PRAGMA busy_timeout = 10000", "PRAGMA journal_mode = WAL", "PRAGMA foreign_keys = ON", "PRAGMA synchronous = NORMAL"]

    init(path: String, threads: Int) {
        self.path = path
        self.threads = NIOThreadPool(numberOfThreads: threads)
        self.threads.start()
    }

    /// Chained on the connection's own futures rather than in a task, so a busy cooperative pool (a test run,
    /// CPU-heavy handlers) cannot hold an opening connection past the pool's request timeout.
    func makeConnection(logger: Logger, on eventLoop: any EventLoop) -> EventLoopFuture<SQLiteStoreConnection> {
        live.withLock { $0.count += 1 }
        return SQLiteConnection.open(storage: .file(path: path), threadPool: threads, logger: logger, on: eventLoop).flatMap { connection in
            // WAL lets readers run beside the one writer; it is persistent, so this only writes on first open.
            Self.pragmas.reduce(eventLoop.makeSucceededVoidFuture()) { previous, pragma in
                previous.flatMap { connection.query(pragma, [], logger: logger) { _ in } }
            }
            .map { SQLiteStoreConnection(connection, onClose: self.closed) }
            .flatMapError { error in connection.close().flatMapThrowing { throw error } }
        }
        .flatMapErrorThrowing { error in
            self.closed()
            throw error
        }
    }

    private func closed() {
        let drained = live.withLock { live in
            live.count -= 1
            guard live.count == 0 else { return [@Sendable () -> Void]() }
            defer { live.drained = [] }
            return live.drained
        }
        for waiter in drained { waiter() }
    }

    /// Calls `body` once no connection is open or opening: at once if none is.
    private func whenDrained(_ body: @escaping @Sendable () -> Void) {
        let now = live.withLock { live in
            guard live.count > 0 else { return true }
            live.drained.append(body)
            return false
        }
        if now { body() }
    }

    /// Stops the threads once the last connection has closed, leaving the store whole in its file. Call after the
    /// pool has shut down.
    func shutdown() async {
        await withCheckedContinuation { continuation in whenDrained { continuation.resume() } }
        try? await checkpoint().get()
        try? await threads.shutdownGracefully()
    }

    /// ``shutdown()`` without waiting for it.
    func shutdownInBackground() {
        whenDrained { [threads] in self.checkpoint().whenComplete { _ in threads.shutdownGracefully { _ in } } }
    }

    /// Opens the store once more, alone, and closes it when a write-ahead log is left: SQLite's last connection to
    /// close writes the log into the store and removes it (and the shared-memory file). The pool's own connections close
    /// at once, each on its thread, and each can see another still open and leave that to it, so none does: a store
    /// copied or backed up after a clean stop would then be missing its latest writes unless its `-wal` file went with
    /// it.
    private func checkpoint() -> EventLoopFuture<Void> {
        let eventLoop = NIOSingletons.posixEventLoopGroup.any()
        // No log, nothing to do; and never a new, empty store where a removed one was.
        let files = FileManager.default
        guard files.fileExists(atPath: path + "-wal"), files.fileExists(atPath: path) else { return eventLoop.makeSucceededVoidFuture() }
        let logger = Logger(label: "kizuna.db")
        return SQLiteConnection.open(storage: .file(path: path), threadPool: threads, logger: logger, on: eventLoop).flatMap { connection in
            // A connection opens the log only when it first reads; one that never read leaves it as it found it.
            connection.query("SELECT COUNT(*) FROM sqlite_master", [], logger: logger) { _ in }
                .flatMapErrorThrowing { _ in }
                .flatMap { connection.close() }
        }
    }
}

/// A pooled SQLite connection that tells its source when it has closed.
final class SQLiteStoreConnection: ConnectionPoolItem, Sendable {
    let connection: SQLiteConnection
    private let onClose: @Sendable () -> Void
    private let closing = Atomic<Bool>(false)

    init(_ connection: SQLiteConnection, onClose: @escaping @Sendable () -> Void) {
        self.connection = connection
        self.onClose = onClose
    }

    var eventLoop: any EventLoop { connection.eventLoop }
    var isClosed: Bool { connection.isClosed }

    func close() -> EventLoopFuture<Void> {
        guard !closing.exchange(true, ordering: .acquiringAndReleasing) else { return connection.eventLoop.makeSucceededVoidFuture() }
        return connection.close().always { _ in self.onClose() }
    }
}
