import Foundation
import KizunaCore
import Logging
import NIOCore
import SQLKit
import Synchronization

/// Resumable artifact uploads (`release_uploads`, migration 11): an artifact sent over as many requests as it takes,
/// each starting where the server's copy ends, kept across dropped connections and server restarts, checked against
/// the SHA-256 the client declared, and attached to its release once whole.
struct ReleaseUploads: Sendable {
    let releases: ReleaseStore
    /// The request size the client is told suits the store (``ArtifactUpload/chunkSize``).
    let chunkSize: Int64
    /// The most an artifact may be, in bytes.
    let maxSize: Int64
    /// This process's lease name, and the running checksums of the uploads it wrote last.
    let running = RunningUploads()

    /// How long an unfinished upload is kept after its last bytes.
    static let lifetime: Int64 = 7 * 24 * 3600 * 1000

    private var database: KizunaDatabase { releases.database }
    private var blobs: any BlobStore { releases.blobs }

    /// Starts an upload, or finds the unfinished one of the same name, size and checksum (`created` false): a client
    /// resumes by asking again. One of the same name that differs is discarded for the new one.
    func start(app: String, release id: String, _ new: NewArtifactUpload) async throws -> (ArtifactUpload, created: Bool) {
        try validate(new)
        guard try await database.raw("SELECT id FROM releases WHERE app_id = \(bind: app) AND id = \(bind: id)").first() != nil else {
            throw KizunaError(.notFound, "\(app) has no release \(id).")
        }
        try await expire()
        let sha256 = new.sha256.lowercased()
        if let row = try await database.raw("SELECT * FROM release_uploads WHERE release_id = \(bind: id) AND name = \(bind: new.name)").first() {
            let existing = try upload(row)
            if existing.size == new.size, existing.sha256 == sha256 { return (existing, false) }
            try await discard(row)
        }
        let key = hex(randomBytes(16))
        let partial = try await blobs.beginPartial(key)
        let now = EpochMillis.now
        let uploadId = hex(randomBytes(12))
        let inserted = try await database.raw(
            """
            INSERT INTO release_uploads (id, release_id, name, size, sha256, content_type, blob, partial, received, created_at, updated_at)
            VALUES (\(bind: uploadId), \(bind: id), \(bind: new.name), \(bind: new.size), \(bind: sha256), \
            \(bind: new.contentType ?? "application/octet-stream"), \(bind: key), \(bind: try Self.text(partial)), 0, \(bind: now), \(bind: now))
            ON CONFLICT (release_id, name) DO NOTHING
            RETURNING id
            """
        ).first()
        guard inserted != nil else {
            // Another request started this name at the same moment: its upload is the one.
            try? await blobs.abortPartial(key, partial)
            return try await start(app: app, release: id, new)
        }
        return (try await find(app: app, release: id, upload: uploadId), true)
    }

    /// An upload of the release. - Throws: `not_found`.
    func find(app: String, release id: String, upload uploadId: String) async throws -> ArtifactUpload {
        try upload(try await row(app: app, release: id, upload: uploadId))
    }

    /// Appends `body` at `offset`, which must be what the server holds; once every byte is in and its SHA-256 is the
    /// declared one, attaches the artifact (``ArtifactUpload/artifact``).
    /// - Throws: `conflict` for another offset or a request already sending this upload; `payload_too_large` for a
    ///   `length` past the upload's end, before any byte is written; `validation_failed` (field
    ///   `sha256`) when the whole does not match, after which the upload is gone; the body's own failure, after what
    ///   arrived of it is kept.
    func send<Body: AsyncSequence & Sendable>(
        app: String, release id: String, upload uploadId: String, offset: Int64, length: Int64? = nil, body: Body, logger: Logger
    ) async throws -> ArtifactUpload where Body.Element == ByteBuffer {
        let lease = try await lease(app: app, release: id, upload: uploadId, offset: offset)
        return try await withLeaseRenewed(lease) {
            // More than the upload lacks, declared: refused before a byte is written.
            if let length, length > lease.upload.size - offset {
                throw KizunaError(.payloadTooLarge, "The upload lacks \(lease.upload.size - offset) bytes; this request declares \(length).")
            }
            return try await append(lease, offset: offset, body: body, logger: logger)
        }
    }

    /// A writer's hold on an upload: the row as it was when taken.
    struct Lease {
        var row: any SQLRow
        var upload: ArtifactUpload
        var writer: String
    }

    /// How long a lease lasts unless renewed (it is, a third of the way through, while the request writes).
    static let leaseLength: Int64 = 60_000

    /// Takes the upload for this request, if no other writer holds it and `offset` is what it holds.
    /// - Throws: `conflict` with `Retry-After` while another writer holds it, or naming the offset to send from.
    private func lease(app: String, release id: String, upload uploadId: String, offset: Int64) async throws -> Lease {
        let now = EpochMillis.now
        let writer = "\(running.processID)-\(hex(randomBytes(4)))"
        // On SQLite one process serves the store, so a lease not taken by this process was left by one that died.
        let single = database.engine == .sqlite
        let taken = try await database.raw(
            """
            UPDATE release_uploads SET writer = \(bind: writer), lease_until = \(bind: now + Self.leaseLength), updated_at = \(bind: now)
            WHERE id = \(bind: uploadId) AND received = \(bind: offset) AND (writer IS NULL OR lease_until < \(bind: now) \
            OR (\(bind: single) AND writer NOT LIKE \(bind: running.processID + "-%"))) RETURNING id
            """
        ).first()
        let row = try await row(app: app, release: id, upload: uploadId)
        let upload = try upload(row)
        guard taken != nil else {
            if offset != upload.received {
                throw KizunaError(
                    .conflict, "The server holds \(upload.received) bytes of this upload: send from there (Upload-Offset: \(upload.received)).",
                    field: "Upload-Offset")
            }
            let until = (try? row.decode(column: "lease_until", as: Int64?.self)) ?? nil
            let wait = max(1, Int(((until ?? now) - now + 999) / 1000))
            throw KizunaError(.conflict, "Another request is sending this upload now; try again in \(wait) seconds.", retryAfter: wait)
        }
        return Lease(row: row, upload: upload, writer: writer)
    }

    /// Runs `body` while renewing `lease` every third of its length.
    private func withLeaseRenewed<T: Sendable>(_ lease: Lease, _ body: () async throws -> T) async throws -> T {
        let (database, id, writer) = (database, lease.upload.id, lease.writer)
        let renewal = Task {
            while !Task.isCancelled {
                try await Task.sleep(for: .milliseconds(Self.leaseLength / 3))
                try await database.raw(
                    """
                    UPDATE release_uploads SET lease_until = \(bind: EpochMillis.now + Self.leaseLength) \
                    WHERE id = \(bind: id) AND writer = \(bind: writer)
                    """
                ).run()
            }
        }
        let result: Result<T, any Error>
        do {
            result = .success(try await body())
        } catch {
            result = .failure(error)
        }
        renewal.cancel()
        // Let go at once, whatever happened: a retry need not wait for the lease to run out.
        _ = try? await database.raw(
            "UPDATE release_uploads SET writer = NULL, lease_until = NULL WHERE id = \(bind: id) AND writer = \(bind: writer)"
        )
        .run()
        return try result.get()
    }

    private func append<Body: AsyncSequence & Sendable>(
        _ lease: Lease, offset: Int64, body: Body, logger: Logger
    ) async throws -> ArtifactUpload where Body.Element == ByteBuffer {
        let (row, upload, uploadId) = (lease.row, lease.upload, lease.upload.id)
        let key = try row.decode(column: "blob", as: String.self)
        let before = try Self.partial(row)
        var hasher = running.hasher(of: uploadId, at: before.received) ?? (before.received == 0 ? BlobHasher() : nil)
        // Every byte in already: an earlier finish did not end (its answer lost, the store away); finish again.
        if before.received == upload.size, upload.size > 0 {
            for try await buffer in body where buffer.readableBytes > 0 { throw KizunaError(.payloadTooLarge, "The upload holds all its bytes.") }
            return try await finish(upload, key: key, partial: before, hasher: hasher)
        }
        let (partial, failure): (PartialBlob, (any Error)?)
        do {
            (partial, failure) = try await blobs.append(
                key, to: before, total: upload.size, from: LimitedBody(base: body, limit: upload.size - offset), hashing: &hasher)
        } catch is PartialBlobLost {
            // Fewer bytes on disk than recorded (another writer truncated it): nothing can be trusted; start over.
            try await database.raw(
                """
                UPDATE release_uploads SET partial = \(bind: try Self.text(PartialBlob(token: before.token))), received = 0, \
                updated_at = \(bind: EpochMillis.now) WHERE id = \(bind: uploadId)
                """
            ).run()
            running.forget(uploadId)
            throw KizunaError(.conflict, "The server's copy of this upload was damaged; it starts again from byte 0 (Upload-Offset: 0).")
        }
        let recorded = try await database.raw(
            """
            UPDATE release_uploads SET partial = \(bind: try Self.text(partial)), received = \(bind: partial.received), \
            updated_at = \(bind: EpochMillis.now), writer = NULL, lease_until = NULL
            WHERE id = \(bind: uploadId) AND received = \(bind: before.received) AND writer = \(bind: lease.writer) RETURNING id
            """
        ).first()
        guard recorded != nil else {
            // The lease was lost (this request stalled past it) and another writer may have taken over: what this one
            // wrote and hashed cannot be trusted.
            running.forget(uploadId)
            throw KizunaError(.conflict, "Another request took this upload over meanwhile; ask where it stands.")
        }
        running.keep(hasher, of: uploadId)
        if let failure {
            logger.notice(
                "Release upload cut short; what arrived is kept",
                metadata: ["upload": "\(uploadId)", "received": "\(partial.received)", "size": "\(upload.size)", "error": "\(failure)"])
            throw failure
        }
        guard partial.received == upload.size else {
            var kept = upload
            kept.received = partial.received
            return kept
        }
        return try await finish(upload, key: key, partial: partial, hasher: hasher)
    }

    /// Discards an upload and what it holds. - Throws: `not_found`.
    func cancel(app: String, release id: String, upload uploadId: String) async throws {
        try await discard(try await row(app: app, release: id, upload: uploadId))
    }

    /// Discards uploads untouched for ``lifetime``. - Returns: how many.
    @discardableResult
    func expire(now: Int64 = EpochMillis.now) async throws -> Int {
        let rows = try await database.raw("SELECT * FROM release_uploads WHERE updated_at < \(bind: now - Self.lifetime)").all()
        for row in rows { try await discard(row) }
        return rows.count
    }

    // MARK: Finishing

    /// Puts the blob in place, checks it, and attaches it. Safe to run again after a failure part way: the store's
    /// finish accepts a blob already in place, and the upload stays (at every byte received) until attached.
    private func finish(_ upload: ArtifactUpload, key: String, partial: PartialBlob, hasher: BlobHasher?) async throws -> ArtifactUpload {
        try await blobs.finishPartial(key, partial)
        let info: BlobInfo
        if let hasher, hasher.count == upload.size {
            info = hasher.finalize()
        } else {
            // This process did not see every byte go by (it was restarted, or another instance took some): read once.
            var reader = BlobHasher()
            for try await buffer in try await blobs.read(key, range: nil) { reader.update(buffer) }
            info = reader.finalize()
        }
        guard info.sha256 == upload.sha256, info.size == upload.size else {
            try? await blobs.delete(key)
            _ = try? await database.raw("DELETE FROM release_uploads WHERE id = \(bind: upload.id)").run()
            running.forget(upload.id)
            throw KizunaError(
                .validationFailed,
                "\(upload.name) arrived with SHA-256 \(info.sha256), not the declared \(upload.sha256): the upload is discarded; send it again.",
                field: "sha256")
        }
        var finished = upload
        finished.received = upload.size
        finished.artifact = try await releases.attach(
            release: upload.release, name: upload.name, blob: key, info: info, contentType: upload.contentType, finishing: upload.id)
        running.forget(upload.id)
        return finished
    }

    // MARK: Rows

    private func validate(_ new: NewArtifactUpload) throws {
        var reader = DocumentReader()
        if !ReleaseArtifact.isValidName(new.name) {
            reader.problem(JSONPath.root["name"], "is not an artifact name: letters, digits, . _ - +, not starting with a dot")
        }
        if !(0...maxSize).contains(new.size) { reader.problem(JSONPath.root["size"], "must be from 0 to \(maxSize) bytes") }
        if new.sha256.count != 64 || hexDecoded(new.sha256) == nil { reader.problem(JSONPath.root["sha256"], "must be 64 hexadecimal digits") }
        if let type = new.contentType, type.isEmpty || type.count > 255 {
            reader.problem(JSONPath.root["contentType"], "must be 1 to 255 characters")
        }
        try reader.throwIfFailed("The upload")
    }

    private func row(app: String, release id: String, upload uploadId: String) async throws -> any SQLRow {
        guard
            let row = try await database.raw(
                """
                SELECT u.* FROM release_uploads u JOIN releases r ON r.id = u.release_id
                WHERE r.app_id = \(bind: app) AND r.id = \(bind: id) AND u.id = \(bind: uploadId)
                """
            ).first()
        else { throw KizunaError(.notFound, "Release \(id) of \(app) has no upload '\(uploadId)'.") }
        return row
    }

    private func discard(_ row: any SQLRow) async throws {
        let id = try row.decode(column: "id", as: String.self)
        let removed = try await database.raw("DELETE FROM release_uploads WHERE id = \(bind: id) RETURNING id").first()
        guard removed != nil else { return }  // another request discarded or finished it
        try? await blobs.abortPartial(try row.decode(column: "blob", as: String.self), try Self.partial(row))
        running.forget(id)
    }

    private func upload(_ row: any SQLRow) throws -> ArtifactUpload {
        let updated = try row.decode(column: "updated_at", as: Int64.self)
        return ArtifactUpload(
            id: try row.decode(column: "id", as: String.self), release: try row.decode(column: "release_id", as: String.self),
            name: try row.decode(column: "name", as: String.self), size: try row.decode(column: "size", as: Int64.self),
            sha256: try row.decode(column: "sha256", as: String.self), contentType: try row.decode(column: "content_type", as: String.self),
            received: try row.decode(column: "received", as: Int64.self), chunkSize: chunkSize,
            createdAt: EpochMillis.date(try row.decode(column: "created_at", as: Int64.self)),
            expiresAt: EpochMillis.date(updated + Self.lifetime))
    }

    static func partial(_ row: any SQLRow) throws -> PartialBlob {
        try JSONDecoder().decode(PartialBlob.self, from: Data(try row.decode(column: "partial", as: String.self).utf8))
    }

    private static func text(_ partial: PartialBlob) throws -> String {
        String(decoding: try JSONEncoder().encode(partial), as: UTF8.self)
    }
}

/// This process's name in the leases it takes (one writer per upload, across instances: ``ReleaseUploads``'s lease),
/// and the running checksum of each upload at the bytes it last kept, so a resumed upload is not read again to be
/// checked.
final class RunningUploads: Sendable {
    /// This process, in the leases it takes.
    let processID = hex(randomBytes(6))
    private let hashers = Mutex<[String: BlobHasher]>([:])

    /// The checksum of `id`'s first `received` bytes, if this process saw exactly those go by.
    func hasher(of id: String, at received: Int64) -> BlobHasher? {
        hashers.withLock { $0.removeValue(forKey: id).flatMap { $0.count == received ? $0 : nil } }
    }

    func keep(_ hasher: BlobHasher?, of id: String) {
        hashers.withLock { $0[id] = hasher }
    }

    func forget(_ id: String) {
        hashers.withLock { _ = $0.removeValue(forKey: id) }
    }
}
