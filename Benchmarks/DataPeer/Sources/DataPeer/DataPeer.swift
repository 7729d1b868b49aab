import ArgumentParser
import Foundation
import PostgresKit
import SQLiteKit

/// `data-peer`: the peer of `Benchmarks/data-api.sh`. It writes and reads the very table Kizuna made for the
/// benchmark's `Note` model, through the same drivers, pool and executor setup, doing at the SQL level exactly what
/// `createNote` and `listNotes(limit:)` do, and nothing else: the ceiling the data API is measured against.
///
/// Prints operations per second on standard output as one number, and a line of details on standard error. Run it
/// only while no `kizuna serve` uses the store (SQLite allows one writer; the benchmark alternates them).
@main
struct DataPeerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "data-peer",
        abstract: "Write and read a Kizuna model table the way createNote and listNotes do, as fast as the driver allows.",
        subcommands: [Insert.self, InsertPlain.self, Select.self]
    )
}

/// Where, what and how hard: shared by every mode.
struct PeerOptions: ParsableArguments {
    @Option(help: "The store: a postgres:// URL, or the path of Kizuna's SQLite file (<data-dir>/kizuna.sqlite).")
    var database: String

    @Option(help: "The model's table: data_<first 10 hex of SHA-256 of the app id>_Note.")
    var table: String

    @Option(help: "The account id that owns the rows (the owner column; listNotes' owner rule).")
    var owner: String

    @Option(help: "Operations in flight at once, as wrk's connections.")
    var concurrency = 64

    @Option(help: "Seconds to measure.")
    var seconds = 10.0

    @Option(help: "Stop after this many operations (rows or pages) instead of after --seconds.")
    var count: Int?

    @Option(help: "Seconds of the same operations before measuring, not counted (connections open, caches warm).")
    var warmup = 1.0

    @Option(
        name: .customLong("connections-per-event-loop"),
        help: "Pool connections per event loop; Kizuna's KizunaDatabase opens 4 on each of NIO's singleton loops (one a core).")
    var connectionsPerEventLoop = 4

    func validate() throws {
        guard concurrency >= 1 else { throw ValidationError("--concurrency must be at least 1.") }
        guard seconds > 0, warmup >= 0 else { throw ValidationError("--seconds must be positive and --warmup not negative.") }
        guard (count ?? 1) >= 1 else { throw ValidationError("--count must be at least 1.") }
        guard connectionsPerEventLoop >= 1 else { throw ValidationError("--connections-per-event-loop must be at least 1.") }
    }

    /// Opens the store as Kizuna does, warms up, measures `operation`, prints the result, and closes the store.
    /// - Throws: `ExitCode.failure` when any operation failed (after printing the first failure).
    func measure(_ mode: String, _ operation: @escaping @Sendable (PeerStore, _ task: Int, _ n: Int) async throws -> Void) async throws {
        // What `kizuna serve` does first (Server.swift): tasks resume on NIO's event loops, not Dispatch's pool.
        let onEventLoops = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        var logger = Logger(label: "data-peer")
        logger.logLevel = .error
        let store = try PeerStore(database: database, connectionsPerEventLoop: connectionsPerEventLoop, logger: logger)
        if warmup > 0 {
            let warm = await LoadRun(concurrency: concurrency, seconds: warmup).run { task, n in try await operation(store, task, -1 - n) }
            if warm.failures > 0 {
                await store.shutdown()
                throw fail("\(mode) failed while warming up: \(warm.firstFailure ?? "?")")
            }
        }
        let report = await LoadRun(concurrency: concurrency, seconds: seconds, count: count).run { task, n in
            try await operation(store, task, n)
        }
        await store.shutdown()
        print(String(format: "%.1f", report.perSecond))
        let details = [
            "data-peer \(mode)", "engine=\(store.engine.rawValue)", "table=\(table)", "concurrency=\(concurrency)",
            "pool=\(store.connections)", "executor=\(onEventLoops ? "nio" : "default")", "operations=\(report.operations)",
            String(format: "seconds=%.2f", report.elapsed.inSeconds), String(format: "ops/s=%.1f", report.perSecond),
            String(format: "p50=%.2fms", report.milliseconds(at: 0.5)), String(format: "p99=%.2fms", report.milliseconds(at: 0.99)),
            "failures=\(report.failures)",
        ]
        FileHandle.standardError.write(Data((details.joined(separator: " ") + "\n").utf8))
        if report.failures > 0 { throw fail("\(mode): \(report.failures) operations failed; the first: \(report.firstFailure ?? "?")") }
    }

    private func fail(_ message: String) -> ExitCode {
        FileHandle.standardError.write(Data("data-peer: \(message)\n".utf8))
        return .failure
    }
}

/// The rows' content and the app they belong to, for the write modes.
struct NoteOptions: ParsableArguments {
    @Option(help: "The app id: the changes row's entity_id.")
    var app = "bench-app"

    @Option(help: "The text of every row (the benchmark's mutation sends the same).")
    var text = "bench note"
}

extension DataPeerCommand {
    struct Insert: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create rows as createNote does: one transaction each with the existence check, the changes row and the row.",
            discussion: """
                On PostgreSQL the changes row is written behind pg_advisory_xact_lock (the log's ordering lock, held to \
                COMMIT) and followed by pg_notify; --no-order-lock and --no-notify leave those out, to measure what each \
                costs concurrent writers. On SQLite writers take turns in the process first, as in Kizuna.
                """
        )

        @OptionGroup var options: PeerOptions
        @OptionGroup var note: NoteOptions

        @Flag(name: .customLong("no-order-lock"), help: "PostgreSQL: do not take the change log's ordering lock.")
        var noOrderLock = false

        @Flag(name: .customLong("no-notify"), help: "PostgreSQL: do not call pg_notify.")
        var noNotify = false

        func run() async throws {
            let statements = NoteStatements(table: options.table, app: note.app, owner: options.owner, text: note.text)
            let orderLock = !noOrderLock, notify = !noNotify
            let mode = ["insert", orderLock ? nil : "--no-order-lock", notify ? nil : "--no-notify"].compactMap { $0 }.joined(separator: " ")
            try await options.measure(mode) { store, _, _ in try await statements.create(in: store, orderLock: orderLock, notify: notify) }
        }
    }

    struct InsertPlain: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "insert-plain",
            abstract: "Insert the same rows with the row INSERT alone, autocommitted: no change log, no transaction, no check."
        )

        @OptionGroup var options: PeerOptions
        @OptionGroup var note: NoteOptions

        func run() async throws {
            let statements = NoteStatements(table: options.table, app: note.app, owner: options.owner, text: note.text)
            // A distinct, increasing _seq for each row, above any seq the change log has handed out.
            let base = NoteStatements.now * 1000
            let concurrency = Int64(options.concurrency)
            try await options.measure("insert-plain") { store, task, n in
                try await statements.insertPlain(in: store, seq: base + Int64(n) * concurrency + Int64(task))
            }
        }
    }

    struct Select: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Read listNotes(limit:)'s first page for the owner: the same keyset SELECT, rows decoded."
        )

        @OptionGroup var options: PeerOptions

        @Option(help: "The page size, as listNotes(limit:) takes it; the SELECT asks for one more row.")
        var limit = 20

        func run() async throws {
            let statements = NoteStatements(table: options.table, app: "", owner: options.owner, text: "")
            let limit = limit, empty = "the page is empty: no rows of \(options.owner) in \(options.table)"
            try await options.measure("select --limit \(limit)") { store, _, _ in
                if try await statements.page(in: store, limit: limit) == 0 { throw PeerError(empty) }
            }
        }
    }
}
