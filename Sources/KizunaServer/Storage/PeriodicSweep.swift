import Logging
import ServiceLifecycle

/// A service's loop for housekeeping: waits until the store is ready, then runs `sweep` at once and every `interval`
/// until shutdown; a failed sweep is logged (`what` names it) and tried again at the next turn. After a failed
/// start-up it waits for shutdown instead: a service that returns would end the whole group.
func sweepPeriodically(
    readiness: Readiness, every interval: Duration, logger: Logger, what: String, _ sweep: () async throws -> Void
) async {
    let state = await cancelWhenGracefulShutdown { await readiness.settled() }
    guard state == .ready else {
        try? await gracefulShutdown()
        return
    }
    while !Task.isCancelled && !Task.isShuttingDownGracefully {
        do {
            try await sweep()
        } catch {
            logger.warning("\(what) failed; retrying at the next sweep", metadata: ["error": "\(error)"])
        }
        try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
    }
}
