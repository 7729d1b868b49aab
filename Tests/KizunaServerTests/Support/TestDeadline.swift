import KizunaTestSupport
import Synchronization
import Testing

/// The step a long test has reached, for the message its deadline fails with.
final class TestStep: Sendable {
    private let value = Mutex("starting")

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
    guard let result else {
        Issue.record("No end after \(limit); the last step reached: \(step.current)")
        return
    }
    try result.get()
}
