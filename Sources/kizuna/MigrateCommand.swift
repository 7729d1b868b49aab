import ArgumentParser
import Foundation
import KizunaServer
import Logging

struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Bring the store's schema up to date, or show what remains.",
        discussion: """
            Each step is transactional; data steps commit in batches with a checkpoint, so a run that is killed can \
            simply be started again and finishes with nothing lost or done twice. A store written by a newer Kizuna \
            is refused and left untouched.

            Exit status: 0; with --status --fail-if-pending, 4 when steps remain (or there is no store yet), so a \
            deploy script can tell before it starts the new version.
            """
    )

    @OptionGroup var store: StoreOptions
    @OptionGroup var output: OutputOptions

    @Flag(help: "Only report whether the store needs migrating and which steps remain; change nothing.")
    var status = false

    @Flag(name: .customLong("fail-if-pending"), help: "With --status: exit 4 when steps remain.")
    var failIfPending = false

    @Option(help: "Apply steps only up to this version.")
    var to: Int?

    @Option(name: .customLong("batch-size"), help: "Rows per transaction in data steps. Default: 1000.")
    var batchSize = 1000

    func validate() throws {
        guard batchSize > 0 else { throw ValidationError("--batch-size must be at least 1.") }
        if let to, to < 0 { throw ValidationError("--to must not be negative.") }
        if failIfPending && !status { throw ValidationError("--fail-if-pending goes with --status.") }
    }

    /// The exit status of `--status --fail-if-pending` when the store needs migrating.
    static let pendingExitCode: Int32 = 4

    func run() async throws {
        let result = try await withStore(store) { database in
            let runner = MigrationRunner(database: database)
            if status { return try await runner.status() }
            let display = ProgressDisplay(json: output.json)
            defer { display.finish() }
            return try await runner.migrate(upTo: to, batchSize: batchSize) { display.show($0) }
        }
        try report(result)
        if failIfPending && (result.needsMigration || !result.storeExists) { throw ExitCode(Self.pendingExitCode) }
    }

    private func report(_ status: MigrationStatus) throws {
        if output.json { return try output.printJSON(status) }
        let written = status.writtenBy.map { ", last migrated by Kizuna \($0)" } ?? ""
        guard status.storeExists else {
            print("No store yet; \(status.pending.count) step(s) will create it (schema \(status.latestVersion)).")
            return printSteps(status.pending)
        }
        if status.needsMigration {
            print("Needs migrating: schema \(status.currentVersion) of \(status.latestVersion)\(written); \(status.pending.count) step(s) remain:")
            printSteps(status.pending)
        } else {
            print("Up to date: schema \(status.currentVersion)\(written).")
        }
    }

    private func printSteps(_ steps: [MigrationStatus.PendingStep]) {
        for step in steps {
            let progress = step.total.map { " — \(step.done ?? 0)/\($0) rows done" } ?? ""
            print("  \(step.version) \(step.name) (\(step.kind))\(progress)")
        }
    }
}

/// Shows migration progress: a bar redrawn in place on a terminal, plain lines otherwise.
final class ProgressDisplay: Sendable {
    private let interactive: Bool
    private let linesToStandardError: Bool

    /// - Parameter json: whether standard output carries JSON, so plain lines must go to standard error.
    init(json: Bool) {
        interactive = isatty(STDERR_FILENO) == 1
        linesToStandardError = json
    }

    func show(_ progress: MigrationProgress) {
        let percent = progress.total > 0 ? progress.done * 100 / progress.total : 100
        let prefix = "[\(progress.stepIndex)/\(progress.stepCount)] \(progress.step)"
        if interactive {
            let width = 30
            let filled = width * percent / 100
            let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
            FileHandle.standardError.write(Data("\r\u{1B}[K\(prefix) \(bar) \(percent)% (\(progress.done)/\(progress.total))".utf8))
        } else {
            // One plain line per committed transaction, so logs and scripts can follow along.
            let line = "migrate: \(prefix) \(progress.done)/\(progress.total) (\(percent)%)\n"
            if linesToStandardError {
                FileHandle.standardError.write(Data(line.utf8))
            } else {
                FileHandle.standardOutput.write(Data(line.utf8))
            }
        }
    }

    func finish() {
        if interactive { FileHandle.standardError.write(Data("\n".utf8)) }
    }
}
