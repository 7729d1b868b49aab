/// Lets one writer at a time through, in arrival order; the others wait as suspended tasks.
///
/// SQLite allows one writer. Left to SQLite, a second writer waits in its busy handler on one of sqlite-nio's
/// thread-pool threads; with as many waiters as threads, the writer holding the lock cannot get a thread for its
/// next statement and every writer stalls until the busy timeout. Queueing writers here, before they reach SQLite,
/// keeps the threads free. (GRDB's `DatabasePool` serializes its writers for the same reason.)
actor WriteGate {
    private var isHeld = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Runs `body` once every writer that arrived earlier has finished.
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
            waiting.removeFirst().resume()  // ownership passes straight to the next writer
        }
    }
}
