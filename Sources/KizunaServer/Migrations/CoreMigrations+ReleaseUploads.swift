import SQLKit

extension CoreMigrations {
    /// 11: resumable artifact uploads.
    ///
    /// `release_uploads`: an artifact arriving over several requests, one per (release, name). `blob` is the key it
    /// goes under when finished, `partial` the blob store's state of it (JSON: its file or multipart upload, the bytes
    /// and parts it holds), `received` those bytes (the `Upload-Offset` the next request must carry); `size` and
    /// `sha256` are what the client declared, checked before the artifact is attached. Unfinished uploads are
    /// discarded a week after `updated_at`. `writer` and `lease_until` say which server process is writing it and
    /// until when (renewed while it writes), so two instances never append to one upload at once.
    static let releaseUploads = MigrationStep(
        version: 11, name: "release uploads",
        work: .schema { db in
            try await db.raw(
                """
                CREATE TABLE release_uploads (
                    id TEXT PRIMARY KEY,
                    release_id TEXT NOT NULL REFERENCES releases (id) ON DELETE CASCADE,
                    name TEXT NOT NULL,
                    size BIGINT NOT NULL,
                    sha256 TEXT NOT NULL,
                    content_type TEXT NOT NULL,
                    blob TEXT NOT NULL,
                    partial TEXT NOT NULL,
                    received BIGINT NOT NULL,
                    writer TEXT,
                    lease_until BIGINT,
                    created_at BIGINT NOT NULL,
                    updated_at BIGINT NOT NULL,
                    UNIQUE (release_id, name))
                """
            ).run()
            try await db.raw("CREATE INDEX release_uploads_updated ON release_uploads (updated_at)").run()
        })
}
