import Foundation

/// How many tests may run a server (or a store) at once in this process: every test target's suites run in one
/// process, all at once, and without a bound the first seconds of a run start a hundred servers on two cores, each
/// starved of CPU past its clients' timeouts, and tests fail for the wrong reason. Tests beyond the bound wait for a slot before they start anything, so no client of theirs is waiting yet.
///
/// A test takes one slot however many servers it runs: a server started inside another's slot (a second instance, a
/// restart, a store under a server) runs in it, so nested starts can never wait on each other.
public enum ServerSlots {
    /// Four per core, at least eight, or `KIZUNA_TEST_SERVER_SLOTS`. Measured on two cores (the whole suite, its
    /// schemathesis run beside it): at twelve per core the run took 445 s and five tests timed out waiting on servers
    /// starved of CPU; at four it took 425 s, none did. The suite is CPU-bound either way, so a wider gate only
    /// stretches each request.
    public static let width =
        ProcessInfo.processInfo.environment["KIZUNA_TEST_SERVER_SLOTS"].flatMap { Int($0) }
        ?? max(8, 4 * ProcessInfo.processInfo.activeProcessorCount)

    @TaskLocal private static var holdsSlot = false
    private static let gate = Gate(width: width)

    /// Runs `body` in a slot, waiting for one first unless the task already holds one.
    public static func withSlot<T>(_ body: () async throws -> T) async throws -> T {
        if holdsSlot { return try await body() }
        await gate.enter()
        do {
            let result = try await $holdsSlot.withValue(true) { try await body() }
            await gate.leave()
            return result
        } catch {
            await gate.leave()
            throw error
        }
    }

    private actor Gate {
        private var free: Int
        private var waiting: [CheckedContinuation<Void, Never>] = []

        init(width: Int) { free = width }

        func enter() async {
            if free > 0 {
                free -= 1
                return
            }
            await withCheckedContinuation { waiting.append($0) }
        }

        func leave() {
            if waiting.isEmpty {
                free += 1
            } else {
                waiting.removeFirst().resume()  // the slot passes straight to the next test
            }
        }
    }
}

/// Runs `body` for at most `limit`: past it, `body` is cancelled and the answer is false. For waits on something a
/// test cannot otherwise bound, so a broken feature fails the test instead of hanging the suite.
public func finishes(within limit: Duration, _ body: @escaping @Sendable () async -> Void) async -> Bool {
    await withTaskGroup(of: Bool.self) { group in
        group.addTask {
            await body()
            return true
        }
        group.addTask {
            try? await Task.sleep(for: limit)
            return false
        }
        let first = await group.next() ?? false
        group.cancelAll()
        return first
    }
}
