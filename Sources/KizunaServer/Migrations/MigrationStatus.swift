/// Where a store stands against the steps this binary knows.
package struct MigrationStatus: Codable, Sendable, Equatable {
    /// Whether the store exists yet (an SQLite file that was never created does not).
    package var storeExists: Bool
    /// The highest step applied; 0 for a new store.
    package var currentVersion: Int
    /// The highest step this binary knows.
    package var latestVersion: Int
    /// The Kizuna version that last migrated the store, when known.
    package var writtenBy: String?
    /// Steps still to run, in order.
    package var pending: [PendingStep]

    /// Whether any step remains.
    package var needsMigration: Bool { !pending.isEmpty }

    /// A step that has not been applied, with its progress if it is a started data step.
    package struct PendingStep: Codable, Sendable, Equatable {
        package var version: Int
        package var name: String
        package var kind: String
        /// Rows done so far (data steps that have started).
        package var done: Int?
        /// Rows in all (data steps that have started).
        package var total: Int?
    }
}

/// Progress of a running migration, reported after every committed transaction.
package struct MigrationProgress: Sendable, Equatable, Codable {
    /// The step running: `2 apps-bundle-key`.
    package var step: String
    /// Units done in this step (rows for a data step; 0 or 1 for a schema step).
    package var done: Int
    /// Units in this step.
    package var total: Int
    /// Index of this step among those being run (1-based) and how many are being run.
    package var stepIndex: Int
    package var stepCount: Int
}
