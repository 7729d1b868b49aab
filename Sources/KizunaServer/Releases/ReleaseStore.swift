import Foundation
import KizunaCore
import NIOCore
import SQLKit

/// The release registry (`releases`, `release_artifacts`, migration 10), with the artifacts' bytes in a ``BlobStore``.
struct ReleaseStore: Sendable {
    let database: KizunaDatabase
    let blobs: any BlobStore

    /// Records a release. - Throws: `validation_failed`; `conflict` when the app already has this (version, build).
    func create(
        app: String, _ release: NewRelease, by author: String, tagTemplate: String = ReleaseTag.defaultTemplate
    ) async throws
        -> ReleaseRecord
    {
        try release.validate()
        let version = try SemanticVersion(parsing: release.version)
        let now = EpochMillis.now
        let id = hex(randomBytes(8))
        let tag =
            release.tag
            ?? ReleaseTag.render(tagTemplate, version: release.version, build: release.build, channel: release.channel, at: EpochMillis.date(now))
        let inserted = try await database.transaction { db in
            try await db.raw(
                """
                INSERT INTO releases (id, app_id, version, version_key, build, channel, notes, commit_sha, branch, tag, created_by, created_at)
                VALUES (\(bind: id), \(bind: app), \(bind: release.version), \(bind: version.releaseKey), \(bind: release.build), \
                \(bind: release.channel.rawValue), \(bind: release.notes), \(bind: release.commit), \(bind: release.branch), \(bind: tag), \
                \(bind: author), \(bind: now))
                ON CONFLICT (app_id, version_key, build) DO NOTHING
                RETURNING id
                """
            ).first()
        }
        guard inserted != nil else {
            throw KizunaError(
                .conflict,
                "\(app) already has a release \(release.version) (\(release.build)); the store refuses a repeated pair: raise the build number.",
                field: "build")
        }
        return try await find(app: app, id: id)!
    }

    /// The app's releases, newest first, with their artifacts.
    func list(app: String, limit: Int) async throws -> [ReleaseRecord] {
        let rows = try await database.raw(
            "SELECT * FROM releases WHERE app_id = \(bind: app) ORDER BY created_at DESC, id DESC LIMIT \(bind: limit)"
        ).all()
        var records: [ReleaseRecord] = []
        for row in rows { records.append(try await record(row)) }
        return records
    }

    /// One release, found by its id or by `version` or `version-build` text (`3.10.1`, `3.10.1-4321`; the newest
    /// build when only the version is given).
    func find(app: String, id: String) async throws -> ReleaseRecord? {
        if let row = try await database.raw("SELECT * FROM releases WHERE app_id = \(bind: app) AND id = \(bind: id)").first() {
            return try await record(row)
        }
        let parts = id.split(separator: "(", maxSplits: 1)
        let text = parts.first.map { $0.trimmingCharacters(in: .whitespaces) } ?? id
        guard let version = try? SemanticVersion(parsing: text) else { return nil }
        let build = parts.count > 1 ? parts[1].trimmingCharacters(in: CharacterSet(charactersIn: ") ")) : nil
        let row =
            if let build {
                try await database.raw(
                    "SELECT * FROM releases WHERE app_id = \(bind: app) AND version_key = \(bind: version.releaseKey) AND build = \(bind: build)"
                ).first()
            } else {
                try await database.raw(
                    """
                    SELECT * FROM releases WHERE app_id = \(bind: app) AND version_key = \(bind: version.releaseKey)
                    ORDER BY created_at DESC, id DESC LIMIT 1
                    """
                ).first()
            }
        return try await row.asyncMap(record)
    }

    /// What the blob store holds for `app`'s releases — artifacts and unfinished uploads — as a step that discards it,
    /// for once the app is gone (its rows go by cascade; a removal that fails leaves the bytes).
    func bytesToDiscard(app: String) async throws -> @Sendable () async -> Void {
        try await bytesToDiscard(app: app, release: nil)
    }

    /// Removes a release, its artifacts' bytes and its unfinished uploads. - Returns: whether it existed.
    func delete(app: String, id: String) async throws -> Bool {
        let discard = try await bytesToDiscard(app: app, release: id)
        let removed = try await database.transaction { db in
            try await db.raw("DELETE FROM releases WHERE app_id = \(bind: app) AND id = \(bind: id) RETURNING id").first() != nil
        }
        await discard()
        return removed
    }

    /// The bytes of `app`'s releases (one, or all when `release` is `nil`), read before their rows go.
    private func bytesToDiscard(app: String, release: String?) async throws -> @Sendable () async -> Void {
        let only: SQLQueryString = release.map { "AND r.id = \(bind: $0)" } ?? ""
        let keys = try await database.raw(
            "SELECT a.blob FROM release_artifacts a JOIN releases r ON r.id = a.release_id WHERE r.app_id = \(bind: app) \(only)"
        ).all().map { try $0.decode(column: "blob", as: String.self) }
        let partials = try await database.raw(
            "SELECT u.blob, u.partial FROM release_uploads u JOIN releases r ON r.id = u.release_id WHERE r.app_id = \(bind: app) \(only)"
        ).all().map { (try $0.decode(column: "blob", as: String.self), try ReleaseUploads.partial($0)) }
        let blobs = blobs
        return {
            for key in keys { try? await blobs.delete(key) }
            for (key, partial) in partials { try? await blobs.abortPartial(key, partial) }
        }
    }

    /// Streams `body` into the blob store and attaches it to the release as `name`, replacing an artifact of that name.
    func attach<Body: AsyncSequence & Sendable>(
        app: String, release id: String, name: String, contentType: String, body: Body
    ) async throws -> ReleaseArtifact where Body.Element == ByteBuffer {
        guard ReleaseArtifact.isValidName(name) else {
            throw KizunaError(
                .validationFailed, "'\(name)' is not an artifact name: letters, digits, . _ - +, not starting with a dot.", field: "name")
        }
        guard try await database.raw("SELECT id FROM releases WHERE app_id = \(bind: app) AND id = \(bind: id)").first() != nil else {
            throw KizunaError(.notFound, "\(app) has no release \(id).")
        }
        let key = hex(randomBytes(16))
        let info = try await blobs.put(key, from: body)
        return try await attach(release: id, name: name, blob: key, info: info, contentType: contentType)
    }

    /// Records the stored blob `key` as the release's artifact `name`, replacing one of that name, in one transaction.
    /// When it finishes the upload `finishing`, that upload must still be there (it is removed in the same transaction)
    /// and a failure keeps the blob, so the upload can be finished again; otherwise a failure deletes the blob (no
    /// orphan bytes).
    func attach(
        release id: String, name: String, blob key: String, info: BlobInfo, contentType: String, finishing upload: String? = nil
    ) async throws -> ReleaseArtifact {
        let artifact = ReleaseArtifact(
            name: name, size: info.size, sha256: info.sha256, md5: info.md5, contentType: contentType, uploadedAt: EpochMillis.date(EpochMillis.now))
        let replaced: String?
        do {
            replaced = try await database.transaction { db -> String? in
                if let upload, try await db.raw("DELETE FROM release_uploads WHERE id = \(bind: upload) RETURNING id").first() == nil {
                    throw KizunaError(.conflict, "This upload was finished or discarded meanwhile.")
                }
                let old = try await db.raw("SELECT blob FROM release_artifacts WHERE release_id = \(bind: id) AND name = \(bind: name)").first()
                    .map { try $0.decode(column: "blob", as: String.self) }
                try await db.raw("DELETE FROM release_artifacts WHERE release_id = \(bind: id) AND name = \(bind: name)").run()
                try await db.raw(
                    """
                    INSERT INTO release_artifacts (release_id, name, blob, size, sha256, md5, content_type, uploaded_at)
                    VALUES (\(bind: id), \(bind: name), \(bind: key), \(bind: info.size), \(bind: info.sha256), \(bind: info.md5), \
                    \(bind: contentType), \(bind: EpochMillis.from(artifact.uploadedAt)))
                    """
                ).run()
                return old
            }
        } catch {
            if upload == nil || (error as? KizunaError)?.code == .conflict, !(try await isAttached(key)) {
                try? await blobs.delete(key)  // nothing will attach it now: no orphan bytes
            }
            throw error
        }
        if let replaced, replaced != key { try? await blobs.delete(replaced) }
        return artifact
    }

    /// Whether an artifact holds the blob `key`.
    private func isAttached(_ key: String) async throws -> Bool {
        try await database.raw("SELECT blob FROM release_artifacts WHERE blob = \(bind: key)").first() != nil
    }

    /// An artifact's record and its blob key. - Throws: `not_found`.
    func artifact(app: String, release id: String, name: String) async throws -> (ReleaseArtifact, blob: String) {
        guard
            let row = try await database.raw(
                """
                SELECT a.* FROM release_artifacts a JOIN releases r ON r.id = a.release_id
                WHERE r.app_id = \(bind: app) AND r.id = \(bind: id) AND a.name = \(bind: name)
                """
            ).first()
        else { throw KizunaError(.notFound, "Release \(id) of \(app) has no artifact '\(name)'.") }
        return (try Self.artifact(row), try row.decode(column: "blob", as: String.self))
    }

    private func record(_ row: any SQLRow) async throws -> ReleaseRecord {
        let id = try row.decode(column: "id", as: String.self)
        let artifacts = try await database.raw("SELECT * FROM release_artifacts WHERE release_id = \(bind: id) ORDER BY name").all().map(
            Self.artifact)
        return ReleaseRecord(
            id: id, app: try row.decode(column: "app_id", as: String.self), version: try row.decode(column: "version", as: String.self),
            build: try row.decode(column: "build", as: String.self),
            channel: ReleaseChannel(rawValue: try row.decode(column: "channel", as: String.self)) ?? .internal,
            notes: try row.decode(column: "notes", as: String?.self), commit: try row.decode(column: "commit_sha", as: String?.self),
            branch: try row.decode(column: "branch", as: String?.self), tag: try row.decode(column: "tag", as: String.self),
            createdBy: try row.decode(column: "created_by", as: String.self),
            createdAt: EpochMillis.date(try row.decode(column: "created_at", as: Int64.self)), artifacts: artifacts, blocked: false)
    }

    private static func artifact(_ row: any SQLRow) throws -> ReleaseArtifact {
        ReleaseArtifact(
            name: try row.decode(column: "name", as: String.self), size: try row.decode(column: "size", as: Int64.self),
            sha256: try row.decode(column: "sha256", as: String.self), md5: try row.decode(column: "md5", as: String.self),
            contentType: try row.decode(column: "content_type", as: String.self),
            uploadedAt: EpochMillis.date(try row.decode(column: "uploaded_at", as: Int64.self)))
    }
}

extension Optional {
    fileprivate func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let self else { return nil }
        return try await transform(self)
    }
}
