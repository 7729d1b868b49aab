import KizunaCore
import Logging
import ServiceLifecycle

/// Discards unfinished release uploads a week after their last bytes, with what the blob store holds of them, and the
/// directory store's temporary files that crashed plain uploads left: once the store is ready, then every `interval`.
/// Any instance may: a discard removes the row first, so only one aborts.
struct ReleaseUploadsExpiry: Service {
    let uploads: ReleaseUploads
    let readiness: Readiness
    let interval: Duration
    let logger: Logger

    func run() async throws {
        await sweepPeriodically(readiness: readiness, every: interval, logger: logger, what: "Expiring release uploads") {
            let expired = try await uploads.expire()
            if expired > 0 { logger.info("Discarded expired release uploads", metadata: ["count": "\(expired)"]) }
            // And the temporary files of plain uploads a crash cut short, once an hour old.
            if let files = uploads.releases.blobs as? FileBlobStore, case let swept = files.sweepTemporaryFiles(), swept > 0 {
                logger.info("Removed temporary files crashed uploads left", metadata: ["count": "\(swept)"])
            }
        }
    }
}
