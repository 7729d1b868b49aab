import Logging
import ServiceLifecycle

/// Closes the store's connections after everything that uses them has stopped.
struct DatabaseService: Service {
    let database: KizunaDatabase
    let logger: Logger
    /// Released only after the store is closed.
    let storeLock: StoreLock?

    func run() async throws {
        try? await gracefulShutdown()
        await database.shutdown()
        storeLock?.release()
        logger.info("Store closed; stopped")
    }
}
