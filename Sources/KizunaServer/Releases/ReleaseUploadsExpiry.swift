import KizunaCore
import Logging
import ServiceLifecycle

/// Discards unfinished release uploads a week after their last bytes, with what the blob store holds of them: once the
/// store is ready, then every `interval`. Any instance may: a discard removes the row first, so only one aborts.
struct ReleaseUploadsExpiry: Service {
    let uploads: ReleaseUploads
    let readiness: Readiness
    let interval: Duration
    let logger: Logger

    func run() async throws {
        let state = await cancelWhenGracefulShutdown { await readiness.settled() }
        guard state == .ready else {
            try? await gracefulShutdown()  // a service that returns would end the group: wait for shutdown instead
            return
        }
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                let expired = try await uploads.expire()
                if expired > 0 { logger.info("Discarded expired release uploads", metadata: ["count": "\(expired)"]) }
            } catch {
                logger.warning("Expiring release uploads failed; retrying at the next sweep", metadata: ["error": "\(error)"])
            }
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: interval) }
        }
    }
}
