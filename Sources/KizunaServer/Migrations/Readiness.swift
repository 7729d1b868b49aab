import KizunaCore
import Synchronization

/// Whether the server can serve its API yet, and what it is doing meanwhile.
package final class Readiness: Sendable {
    /// The phases a server goes through at start.
    package enum State: Sendable, Equatable {
        /// Checking the store.
        case starting
        /// Running migrations; the latest progress.
        case migrating(MigrationProgress)
        /// Serving.
        case ready
        /// Start-up failed (for example a migration error); the API stays unavailable.
        case failed(KizunaError)
    }

    private struct Storage {
        var state: State = .starting
        var waiters: [UInt64: CheckedContinuation<State, Never>] = [:]
        var nextWaiter: UInt64 = 0
    }

    private let storage = Mutex(Storage())
    /// Whether the state is `ready`: read by every request, so without the lock.
    private let ready = Atomic<Bool>(false)

    /// Creates a readiness tracker in `starting`.
    package init() {}

    /// The current state.
    package var current: State { storage.withLock { $0.state } }

    /// Whether the API may be served.
    package var isReady: Bool { ready.load(ordering: .acquiring) }

    /// Waits until start-up has finished, and returns `ready` or `failed`.
    package func settled() async -> State {
        let id = storage.withLock { storage in
            defer { storage.nextWaiter += 1 }
            return storage.nextWaiter
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let settled: State? = storage.withLock { storage in
                    switch storage.state {
                    case .ready, .failed: return storage.state
                    default:
                        guard !Task.isCancelled else { return storage.state }
                        storage.waiters[id] = continuation
                        return nil
                    }
                }
                if let settled { continuation.resume(returning: settled) }
            }
        } onCancel: {
            // A cancelled waiter gets the state as it is (`starting` or `migrating`) instead of waiting on.
            let (waiter, state) = storage.withLock { ($0.waiters.removeValue(forKey: id), $0.state) }
            waiter?.resume(returning: state)
        }
    }

    func update(_ newState: State) {
        let waiters = storage.withLock { storage in
            storage.state = newState
            ready.store(newState == .ready, ordering: .releasing)
            switch newState {
            case .ready, .failed:
                defer { storage.waiters = [:] }
                return Array(storage.waiters.values)
            default: return []
            }
        }
        for waiter in waiters { waiter.resume(returning: newState) }
    }
}
