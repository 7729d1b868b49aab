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

    private let state = Mutex<State>(.starting)

    /// Creates a readiness tracker in `starting`.
    public init() {}

    /// The current state.
    public var current: State { state.withLock { $0 } }

    /// Whether the API may be served.
    public var isReady: Bool { current == .ready }

    func update(_ newState: State) {
        state.withLock { $0 = newState }
    }
}
