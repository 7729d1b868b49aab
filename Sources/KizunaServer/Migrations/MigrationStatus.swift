/// Where a store stands against the steps this binary knows.
public struct MigrationStatus: Codable, Sendable, Equatable {
    /// Whether the store exists yet (an SQLite file that was never created does not).
    public var storeExists: Bool
    /// The highest step applied; 0 for a new store.
    public var currentVersion: Int
    /// The highest step this binary knows.
    public var latestVersion: Int
    /// The Kizuna version that last migrated the store, when known.
    public var writtenBy: String?
    /// Steps still to run, in order.
    public var pending: [PendingStep]

    /// Whether any step remains.
    public var needsMigration: Bool { !pending.isEmpty }

    /// A step that has not been applied, with its progress if it is a started data step.
    public struct PendingStep: Codable, Sendable, Equatable {
        public var version: Int
        public var name: String
        public var kind: String
        /// Rows done so far (data steps that have started).
        public var done: Int?
        /// Rows in all (data steps that have started).
        public var total: Int?
    }
}

/// Progress of a running migration, reported after every committed transaction.
public struct MigrationProgress: Sendable, Equatable, Codable {
    /// The step running: `2 apps-bundle-key`.
    public var step: String
    /// Units done in this step (rows for a data step; 0 or 1 for a schema step).
    public var done: Int
    /// Units in this step.
    public var total: Int
    /// Index of this step among those being run (1-based) and how many are being run.
    public var stepIndex: Int
    public var stepCount: Int
}
