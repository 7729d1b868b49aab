/// Kizuna's own schema history, one file per step (`CoreMigrations+<Step>.swift`). Append new steps; never edit or
/// renumber an applied one.
package enum CoreMigrations {
    /// Every step, in order.
    package static let all: [MigrationStep] = [
        coreSchema, appsBundleKey, publishing, accounts, refreshFamilies, dataAccess, dataJobs, pushDevices, pushJobs, releases,
        releaseUploads, consoleSessions,
    ]
}
