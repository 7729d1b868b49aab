import Foundation
import KizunaCore
import Logging
import Metrics
import ServiceLifecycle

/// How ``DataJobRunner`` works through schema jobs.
package struct DataJobSettings: Sendable {
    /// How often the runner looks for jobs without being woken: the most a lost wake-up, or a failed job's retry,
    /// waits beyond its time.
    package var pollInterval: Duration = .seconds(5)
    /// How long a claimed job stays this instance's without a sign of life (each batch, or a heartbeat while an index
    /// builds, renews it); another instance takes the job over once it runs out.
    package var lease: Duration = .seconds(60)
    /// Told each job's state after every committed step: a batch, the end, a failure. Awaited before the job goes
    /// on, so a test can hold a job mid-way.
    package var observer: (@Sendable (DataJobInfo) async -> Void)?

    package init() {}
}

/// Runs the jobs data schema publishes leave (``DataJobQueue``): index builds and backfills, in short steps, while
/// the server answers.
///
/// Woken when the change feed reports a schema publish (from any instance) and by a slow timer, it claims one job
/// at a time under a lease and runs it. Every step commits with the job's progress, so a stopped or killed server
/// loses nothing: at the next start (SQLite) or once the lease runs out (another PostgreSQL instance), the job
/// resumes from its checkpoint. A failed attempt is recorded with its reason and tried again after a growing
/// delay; a job a later publish cancelled is dropped at its next step.
package final class DataJobRunner: Service, Sendable {
    let queue: DataJobQueue
    let database: KizunaDatabase
    let settings: DataJobSettings
    /// Rows a backfill fills per transaction.
    let batchSize: Int
    let logger: Logger
    /// This process's name in the leases it takes.
    let owner = UUID().uuidString
    private let readiness: Readiness?
    private let wakes: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation
    private let unfinished = Gauge(label: "kizuna_data_jobs_unfinished", dimensions: [])

    /// Creates a runner that starts once `readiness` says the store is migrated and is woken by schema publishes
    /// `feed` delivers.
    package init(
        database: KizunaDatabase, readiness: Readiness?, feed: ChangeFeed?, batchSize: Int, settings: DataJobSettings = DataJobSettings(),
        logger: Logger
    ) {
        precondition(batchSize > 0, "batch size must be positive")
        self.database = database
        queue = DataJobQueue(database: database)
        self.readiness = readiness
        self.batchSize = batchSize
        self.settings = settings
        self.logger = logger
        (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let continuation = wake
        // A publish that recorded jobs appends a `schema` change in its transaction: every instance hears of it.
        feed?.observe { change in
            if change.kind == DocumentKind.schema.rawValue { continuation.yield() }
        }
    }

    /// Asks the runner to look for jobs now.
    package func poke() {
        wake.yield()
    }

    package func run() async throws {
        if let readiness {
            // The queue exists once migrations are done; a failed start-up leaves the runner idle until shutdown.
            let state = await cancelWhenGracefulShutdown { await readiness.settled() }
            guard state == .ready else {
                try? await gracefulShutdown()
                return
            }
        }
        wake.yield()  // jobs left by an earlier run, or by a server that was killed
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: self.settings.pollInterval)
                    self.wake.yield()
                }
            }
            group.addTask {
                for await _ in self.wakes.cancelOnGracefulShutdown() { await self.drain() }
            }
            await group.next()
            group.cancelAll()
        }
    }

    /// Runs jobs until none may run now, or the server stops.
    private func drain() async {
        while !Task.isCancelled, !Task.isShuttingDownGracefully {
            let job: DataJob?
            do {
                // On SQLite one server runs (the store lock sees to it): a job another process left running is orphaned.
                job = try await queue.claim(owner: owner, lease: settings.lease, takeOverAll: database.engine == .sqlite)
            } catch {
                logger.warning("Looking for schema jobs failed; trying again later", metadata: ["error": "\(StoreFailure.summary(error))"])
                break
            }
            guard let job else { break }
            await execute(job)
        }
        if let count = try? await queue.unfinishedCount() { unfinished.record(count) }
    }

    /// Why a job stopped short of done without failing.
    enum Interruption: Error {
        /// A later publish cancelled it, or another instance took it over.
        case lost
        /// The server is stopping.
        case stopping
        /// Another instance is still working on the same index; try again later.
        case busy
    }

    private func execute(_ job: DataJob) async {
        var metadata: Logger.Metadata = [
            "job": "\(job.id)", "app": "\(job.app)", "kind": "\(job.work.kind)", "model": "\(job.model)", "target": "\(job.work.target)",
        ]
        logger.info("\(job.attempts > 1 ? "Resuming" : "Running") schema job", metadata: metadata)
        do {
            switch job.work {
            case .index(_, let name, let columns): try await buildIndex(job, name: name, columns: columns)
            case .backfill(let field, let value): try await backfill(job, field: field, value: value)
            }
            logger.notice("Schema job finished", metadata: metadata)
        } catch Interruption.lost {
            logger.info("Schema job was cancelled by a later publish or taken over; leaving it", metadata: metadata)
        } catch Interruption.stopping {
            try? await queue.release(job, owner: owner)
            logger.info("Schema job paused for shutdown; it resumes where it stopped", metadata: metadata)
        } catch Interruption.busy {
            try? await queue.release(job, owner: owner, runAfter: EpochMillis.now + settings.pollInterval.milliseconds)
        } catch {
            let delay = Self.retryDelay(afterAttempt: job.attempts)
            let reason = StoreFailure.summary(error)
            metadata["error"] = "\(reason)"
            if (try? await queue.fail(job, owner: owner, error: reason, retryAt: EpochMillis.now + delay.milliseconds)) == true {
                metadata["retryIn"] = "\(delay)"
                logger.warning("Schema job failed; it will be tried again", metadata: metadata)
            } else {
                logger.info("Schema job stopped: it was cancelled by a later publish or taken over", metadata: metadata)
            }
        }
        await report(job)
    }

    /// 5 s after the first failed attempt, doubling up to 10 minutes.
    static func retryDelay(afterAttempt attempt: Int) -> Duration {
        .seconds(min(5 << min(max(attempt - 1, 0), 7), 600))
    }

    /// Tells the observer, if any, where the job stands now.
    func report(_ job: DataJob) async {
        guard let observer = settings.observer, let current = try? await queue.find(id: job.id) else { return }
        await observer(current.info)
    }
}
