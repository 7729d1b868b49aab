import KizunaCore
import Logging
import ServiceLifecycle

/// Brings the store up to date in the background while the server already answers health checks.
///
/// Runs pending migrations (reporting progress to ``Readiness``), creates the first admin token of an empty store,
/// then marks the server ready. It stays running until shutdown so the service group keeps serving.
struct StartupService: Service {
    let runner: MigrationRunner
    let firstToken: FirstAdminToken
    let readiness: Readiness
    let batchSize: Int
    let logger: Logger

    func run() async throws {
        do {
            let status = try await runner.status()
            if let first = status.pending.first {
                logger.notice("Store needs migrating; serving health checks meanwhile", metadata: ["pending": "\(status.pending.count)"])
                readiness.update(
                    .migrating(
                        .init(
                            step: "\(first.version) \(first.name)", done: first.done ?? 0, total: first.total ?? 0, stepIndex: 1,
                            stepCount: status.pending.count)))
                _ = try await cancelWhenGracefulShutdown {
                    try await runner.migrate(batchSize: batchSize) { readiness.update(.migrating($0)) }
                }
            }
            try await firstToken.createIfNone()
            readiness.update(.ready)
            logger.info("Ready")
        } catch is CancellationError {
            return
        } catch {
            // The details go to the log only: /health/ready is public and must not show driver errors or internals.
            logger.critical("Start-up failed; the API stays unavailable", metadata: ["error": "\(String(reflecting: error))"])
            readiness.update(.failed((error as? KizunaError) ?? KizunaError(.internalError, "Start-up failed; see the server's log.")))
        }
        try? await gracefulShutdown()
        logger.info("Shutting down: finishing requests in flight, then closing the store")
    }
}
