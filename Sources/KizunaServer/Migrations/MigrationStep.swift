import SQLKit

/// One numbered change to the store's schema or data.
///
/// A ``Work/schema(_:)`` step runs in one transaction with the record that it ran. A ``Work/batched(_:)`` step
/// touches many rows: it runs batch after batch, each in its own transaction with a checkpoint, so a process
/// killed at any moment resumes after the last committed batch with nothing lost or done twice.
package struct MigrationStep: Sendable {
    /// Increasing, never reused; the store records the highest one applied.
    package let version: Int
    /// A short slug shown in status output: `apps-bundle-key`.
    package let name: String
    /// What the step does.
    package let work: Work

    /// The kinds of work a step can do.
    package enum Work: Sendable {
        /// DDL or small data changes that fit in one transaction.
        case schema(@Sendable (any SQLDatabase) async throws -> Void)
        /// A data change over many rows, done in checkpointed batches.
        case batched(BatchedWork)
    }

    /// `schema` or `data`, for status output.
    package var kind: String {
        switch work {
        case .schema: "schema"
        case .batched: "data"
        }
    }

    /// Creates a step.
    package init(version: Int, name: String, work: Work) {
        self.version = version
        self.name = name
        self.work = work
    }
}

/// The parts of a batched data step.
package struct BatchedWork: Sendable {
    /// Runs once, in the transaction that starts the step (for example adding the column to fill).
    package var prepare: @Sendable (any SQLDatabase) async throws -> Void
    /// Counts the rows the step will visit; recorded when the step starts, for progress.
    package var count: @Sendable (any SQLDatabase) async throws -> Int
    /// Processes up to `limit` rows after `checkpoint` (`nil` at the start) and returns the new checkpoint and how many
    /// rows it visited, or `nil` when no rows remain. Runs in a transaction with the checkpoint update.
    package var batch: @Sendable (_ database: any SQLDatabase, _ checkpoint: String?, _ limit: Int) async throws -> BatchOutcome?
    /// Runs once, in the transaction that records the step as applied (for example creating an index).
    package var finish: @Sendable (any SQLDatabase) async throws -> Void

    /// Creates batched work.
    package init(
        prepare: @escaping @Sendable (any SQLDatabase) async throws -> Void,
        count: @escaping @Sendable (any SQLDatabase) async throws -> Int,
        batch: @escaping @Sendable (any SQLDatabase, String?, Int) async throws -> BatchOutcome?,
        finish: @escaping @Sendable (any SQLDatabase) async throws -> Void
    ) {
        self.prepare = prepare
        self.count = count
        self.batch = batch
        self.finish = finish
    }
}

/// What one batch did.
package struct BatchOutcome: Sendable {
    /// Where the next batch starts.
    package var checkpoint: String
    /// Rows visited by this batch.
    package var visited: Int

    /// Creates an outcome.
    package init(checkpoint: String, visited: Int) {
        self.checkpoint = checkpoint
        self.visited = visited
    }
}
