import Foundation
import KizunaTestSupport
import Logging
import Synchronization
import Testing

/// The step a long test has reached, and what its servers logged lately, for the message its deadline fails with.
final class TestStep: Sendable {
    private let value = Mutex("starting")
    /// What the servers given ``logHandler`` logged: warnings and worse, and the service lifecycle (which service a
    /// shutdown waits on), the last 60 lines.
    private let lines = Mutex<[String]>([])

    /// Keeps what a server logs for the failure message; give it to ``KizunaConfiguration/logHandler`` with the log
    /// level at `.debug`.
    var logHandler: @Sendable (String) -> any LogHandler {
        { label in StepLogHandler(label: label, step: self) }
    }

    fileprivate func record(_ line: String) {
        lines.withLock { lines in
            lines.append(line)
            if lines.count > 60 { lines.removeFirst(lines.count - 60) }
        }
    }

    var recentLog: [String] { lines.withLock { $0 } }

    func reached(_ step: String) {
        value.withLock { $0 = step }
    }

    var current: String { value.withLock { $0 } }
}

/// Runs `body` in a task of its own and waits for it at most `limit`: past it, the test fails naming the last step
/// `body` reached, and returns without waiting for it.
///
/// For tests that take the store away under running servers: one of them once stalled the whole run, idle, in a wait
/// that ignores cancellation, which a time-limit trait cannot end (it waits for the test too).
///
/// The deadline starts once the test holds a ``ServerSlots`` slot (which the servers it starts then share): waiting for
/// one is not the test's time.
func withDeadline(_ limit: Duration, _ body: @escaping @Sendable (TestStep) async throws -> Void) async throws {
    try await ServerSlots.withSlot { try await runWithDeadline(limit, body) }
}

private func runWithDeadline(_ limit: Duration, _ body: @escaping @Sendable (TestStep) async throws -> Void) async throws {
    let step = TestStep()
    let (outcome, report) = AsyncStream.makeStream(of: Result<Void, any Error>?.self)
    let work = Task { try await body(step) }
    Task { report.yield(await work.result) }
    let deadline = Task {
        try? await Task.sleep(for: limit)
        report.yield(nil)
    }
    var first = outcome.makeAsyncIterator()
    let result = await first.next() ?? nil
    deadline.cancel()
    let log = step.recentLog
    let logged = log.isEmpty ? "" : "; the servers logged last:\n" + log.joined(separator: "\n")
    guard let result else {
        Issue.record("No end after \(limit); the last step reached: \(step.current)\(logged)")
        return
    }
    do {
        try result.get()
    } catch let error as ExpectationFailedError {
        throw error  // recorded already, where it was required
    } catch {
        // A failure deep in a long test says where it was and what the servers were doing, as a passed deadline does.
        Issue.record("\(error) at the step '\(step.current)'\(logged)")
    }
}

/// A ``TestStep``'s log handler: warnings and worse, and ServiceLifecycle's steps.
private struct StepLogHandler: LogHandler {
    let label: String
    let step: TestStep
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .debug

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        guard event.level >= .warning || event.source == "ServiceLifecycle" else { return }
        // A service is named by its type: the rest of its description is its state, which can run to pages.
        let service = event.metadata?["sl-service"].map { value in " service=" + String("\(value)".prefix { $0 != "(" }) } ?? ""
        let time = Date().formatted(.iso8601.time(includingFractionalSeconds: true))
        step.record("\(time) \(event.level) \(label): \(event.message)\(service)")
    }
}
