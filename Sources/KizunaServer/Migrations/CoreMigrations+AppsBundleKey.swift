import SQLKit

extension CoreMigrations {
    /// 2: `apps.bundle_key`, the case-folded bundle id, unique per platform.
    ///
    /// Apple treats bundle ids case-insensitively, so `com.Example.App` and `com.example.app` must not both register.
    /// Existing rows are filled in batches keyed by id, so a store with many apps migrates without one long lock and
    /// resumes where it stopped.
    static let appsBundleKey = MigrationStep(
        version: 2, name: "apps-bundle-key",
        work: .batched(
            BatchedWork(
                prepare: { db in try await db.raw("ALTER TABLE apps ADD COLUMN bundle_key TEXT").run() },
                count: { db in try await db.raw("SELECT COUNT(*) AS n FROM apps").first()?.decode(column: "n", as: Int.self) ?? 0 },
                batch: { db, checkpoint, limit in
                    let ids = try await db.raw(
                        "SELECT id FROM apps WHERE id > \(bind: checkpoint ?? "") ORDER BY id LIMIT \(bind: limit)"
                    ).all().map { try $0.decode(column: "id", as: String.self) }
                    guard let last = ids.last else { return nil }
                    try await db.raw(
                        "UPDATE apps SET bundle_key = LOWER(bundle_id) WHERE id > \(bind: checkpoint ?? "") AND id <= \(bind: last)"
                    ).run()
                    return BatchOutcome(checkpoint: last, visited: ids.count)
                },
                finish: { db in
                    try await db.raw("CREATE UNIQUE INDEX apps_platform_bundle_key ON apps (platform, bundle_key)").run()
                }
            )))
}
