import KizunaCore
import Synchronization

/// Whether the server can serve its API yet, and what it is doing meanwhile.
public final class Readiness: Sendable {
    /// The phases a server goes through at start.
    public enum State: Sendable, Equatable {
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
        var waiters: [CheckedContinuation<State, Never>] = []
    }

    private let storage = Mutex(Storage())

    /// Creates a readiness tracker in `starting`.
    public init() {}

    /// The current state.
    public var current: State { storage.withLock { $0.state } }

    /// Whether the API may be served.
    public var isReady: Bool { current == .ready }

    /// Waits until start-up has finished, and returns `ready` or `failed`.
    public func settled() async -> State {
        await withCheckedContinuation { continuation in
            let settled: State? = storage.withLock { storage in
                switch storage.state {
                case .ready, .failed: return storage.state
                default:
                    storage.waiters.append(continuation)
                    return nil
                }
            }
            if let settled { continuation.resume(returning: settled) }
        }
    }

    func update(_ newState: State) {
        let waiters = storage.withLock { storage in
            storage.state = newState
            switch newState {
            case .ready, .failed:
                defer { storage.waiters = [] }
                return storage.waiters
            default: return []
            }
        }
        for waiter in waiters { waiter.resume(returning: newState) }
    }
}
