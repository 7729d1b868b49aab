import SQLKit

extension CoreMigrations {
    /// 10: the release registry.
    ///
    /// `releases`: one row per (app, version, build) — the store refuses a repeated pair, so the registry refuses it
    /// first; `version_key` is the version with missing components as zero (`3.10` and `3.10.0` are one version).
    /// `release_artifacts`: the files attached to a release, each a blob in the blob store (`blob` is its key) with the
    /// size and checksums computed while it streamed in.
    static let releases = MigrationStep(
        version: 10, name: "releases",
        work: .schema { db in
            try await db.raw(
                """
                CREATE TABLE releases (
                    id TEXT PRIMARY KEY,
                    app_id TEXT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
                    version TEXT NOT NULL,
                    version_key TEXT NOT NULL,
                    build TEXT NOT NULL,
                    channel TEXT NOT NULL CHECK (channel IN ('appstore', 'testflight', 'adhoc', 'internal')),
                    notes TEXT,
                    commit_sha TEXT,
                    branch TEXT,
                    tag TEXT NOT NULL,
                    created_by TEXT NOT NULL,
                    created_at BIGINT NOT NULL,
                    UNIQUE (app_id, version_key, build))
                """
            ).run()
            try await db.raw("CREATE INDEX releases_app ON releases (app_id, created_at)").run()
            try await db.raw(
                """
                CREATE TABLE release_artifacts (
                    release_id TEXT NOT NULL REFERENCES releases (id) ON DELETE CASCADE,
                    name TEXT NOT NULL,
                    blob TEXT NOT NULL,
                    size BIGINT NOT NULL,
                    sha256 TEXT NOT NULL,
                    md5 TEXT NOT NULL,
                    content_type TEXT NOT NULL,
                    uploaded_at BIGINT NOT NULL,
                    PRIMARY KEY (release_id, name))
                """
            ).run()
        })
}
