import Crypto
import Foundation
import KizunaCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension AdminClient {
    /// Starts a resumable upload, or finds the unfinished one of the same name, size and SHA-256 (to resume it).
    public func startUpload(app: String, release: String, _ upload: NewArtifactUpload) async throws(KizunaError) -> ArtifactUpload {
        try await http.send("POST", try uploadsPath(app, release), body: upload)
    }

    /// Where an upload stands: ``ArtifactUpload/received`` is where the next bytes start.
    public func upload(app: String, release: String, id: String) async throws(KizunaError) -> ArtifactUpload {
        try await http.send("GET", try uploadsPath(app, release) + "/" + pathSegment(id))
    }

    /// Discards an unfinished upload and the bytes the server holds of it.
    public func cancelUpload(app: String, release: String, id: String) async throws(KizunaError) {
        try await http.send("DELETE", try uploadsPath(app, release) + "/" + pathSegment(id))
    }

    /// Sends `bytes` at the upload's ``ArtifactUpload/received``. - Returns: the upload as it now stands, with its
    /// artifact once whole. - Throws: `conflict` when the server holds another count of bytes.
    public func sendUpload(app: String, release: String, _ upload: ArtifactUpload, bytes: Data) async throws(KizunaError) -> ArtifactUpload {
        let reply = try await http.exchange(
            "PATCH", try uploadsPath(app, release) + "/" + pathSegment(upload.id), data: bytes,
            headers: ["Upload-Offset": String(upload.received), "Content-Type": "application/octet-stream"], timeout: Self.chunkTimeout)
        return try reply.decode(ArtifactUpload.self, what: "PATCH upload \(upload.name)")
    }

    /// Uploads the file at `file` as the artifact `name`, a chunk at a time (the server's ``ArtifactUpload/chunkSize``,
    /// read from disk as it goes), resuming where the server's copy ends: after a dropped connection or a restarted
    /// server (it retries up to `attempts` times in a row, backing off), and in a later run (asking again finds the
    /// unfinished upload). The server checks the whole against the file's SHA-256 before attaching it.
    /// - Parameter progress: Told the bytes the server holds and the total: first where it starts (more than zero
    ///   when resuming), then after each chunk.
    public func uploadArtifactResumably(
        app: String, release: String, name: String, file: URL, contentType: String = "application/octet-stream", attempts: Int = 5,
        progress: @escaping @Sendable (_ done: Int64, _ total: Int64) -> Void = { _, _ in }
    ) async throws(KizunaError) -> ReleaseArtifact {
        let digest: (sha256: String, size: Int64)
        do { digest = try FileDigest.sha256(of: file) } catch { throw KizunaError(.notFound, "Cannot read \(file.path).") }
        var upload = try await startUpload(
            app: app, release: release, NewArtifactUpload(name: name, size: digest.size, sha256: digest.sha256, contentType: contentType))
        // The release by its id from here on: "3.10.1" names the newest build, which another pipeline may add meanwhile.
        let release = upload.release
        guard let handle = FileHandle(forReadingAtPath: file.path) else { throw KizunaError(.notFound, "Cannot read \(file.path).") }
        defer { try? handle.close() }
        progress(upload.received, upload.size)
        var failures = 0
        while upload.artifact == nil {
            guard (0...upload.size).contains(upload.received) else {
                throw KizunaError(.transport, "The server says it holds \(upload.received) of \(upload.size) bytes.")
            }
            let bytes: Data
            do {
                try handle.seek(toOffset: UInt64(upload.received))
                bytes = try handle.read(upToCount: Int(max(1, min(upload.chunkSize, upload.size - upload.received)))) ?? Data()
            } catch {
                throw KizunaError(.internalError, "Reading \(file.path) failed: \(error.localizedDescription)")
            }
            if bytes.isEmpty && upload.received < upload.size {
                throw KizunaError(.conflict, "\(file.path) is shorter than when it was hashed: it changed during the upload.")
            }
            let before = upload.received
            do throws(KizunaError) {
                upload = try await sendUpload(app: app, release: release, upload, bytes: bytes)
                // An answer that moved nothing on counts as a failure: no endless loop.
                failures = upload.received > before || upload.artifact != nil ? 0 : failures + 1
                if failures >= attempts { throw KizunaError(.transport, "The server kept \(before) bytes and took no more.") }
            } catch  where Self.isWorthRetrying(error) && failures + 1 < attempts {
                failures += 1
                await Self.pause(after: error, failures: failures)
                upload = try await resync(app: app, release: release, upload, attempts: attempts - failures)
            }
            progress(upload.received, upload.size)
        }
        return upload.artifact!
    }

    /// Where `upload` stands after a failed request, asked again while the server is away (a restart); an upload
    /// gone because the lost answer was the last — the artifact attached — comes back with that artifact.
    private func resync(app: String, release: String, _ upload: ArtifactUpload, attempts: Int) async throws(KizunaError) -> ArtifactUpload {
        var failures = 0
        while true {
            do {
                return try await self.upload(app: app, release: release, id: upload.id)
            } catch  where error.code == .notFound {
                let attached = try await self.release(app: app, release).artifacts.first { $0.name == upload.name && $0.sha256 == upload.sha256 }
                guard let attached else { throw error }
                var finished = upload
                finished.received = upload.size
                finished.artifact = attached
                return finished
            } catch  where Self.isWorthRetrying(error) && failures + 1 < max(1, attempts) {
                failures += 1
                await Self.pause(after: error, failures: failures)
            }
        }
    }

    /// Downloads the artifact `name` into `destination`, a chunk at a time with ranged requests, checked against its
    /// SHA-256. The bytes go to `destination` plus `.<sha256 prefix>.part` first: a download cut short resumes from
    /// that file in the next run, and only a whole, checked file takes `destination`'s name.
    /// - Returns: The artifact's record.
    @discardableResult
    public func downloadArtifact(
        app: String, release: String, name: String, to destination: URL,
        progress: @escaping @Sendable (_ done: Int64, _ total: Int64) -> Void = { _, _ in }
    ) async throws(KizunaError) -> ReleaseArtifact {
        let record = try await self.release(app: app, release)
        guard let artifact = record.artifacts.first(where: { $0.name == name }) else {
            throw KizunaError(.notFound, "Release \(record.version) (\(record.build)) has no artifact '\(name)'.")
        }
        let partial = destination.deletingLastPathComponent().appendingPathComponent(
            ".\(destination.lastPathComponent).\(artifact.sha256.prefix(12)).part")
        let path = try artifactPath(app, record.id, name)
        var sha256 = SHA256()
        do {
            if !FileManager.default.fileExists(atPath: partial.path) { _ = FileManager.default.createFile(atPath: partial.path, contents: nil) }
            let handle = try FileHandle(forUpdating: partial)
            defer { try? handle.close() }
            // What an earlier run left is checked with the rest: read once here, hashed as the rest arrives.
            var done: Int64 = 0
            while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                sha256.update(data: chunk)
                done += Int64(chunk.count)
            }
            if done > artifact.size {
                try handle.truncate(atOffset: 0)
                (sha256, done) = (SHA256(), 0)
            }
            progress(done, artifact.size)
            while done < artifact.size {
                let end = min(done + Self.downloadChunk, artifact.size) - 1
                // If-Range: should the artifact be replaced meanwhile, the answer is the new whole file (200), not a
                // range of it mixed into this one.
                let reply = try await http.exchange(
                    "GET", path, data: nil, headers: ["Range": "bytes=\(done)-\(end)", "If-Range": "\"\(artifact.sha256)\"", "Accept": "*/*"],
                    timeout: Self.chunkTimeout)
                if reply.status == 200 && done > 0 {
                    try? FileManager.default.removeItem(at: partial)
                    throw KizunaError(.conflict, "\(name) was replaced during the download; run it again.")
                }
                let whole = reply.status == 200 && done == 0 && Int64(reply.body.count) == artifact.size  // a range ignored
                guard whole || (reply.status == 206 && Int64(reply.body.count) == end - done + 1) else {
                    throw KizunaError(.transport, "GET \(name) answered \(reply.status) with \(reply.body.count) bytes for bytes \(done)-\(end).")
                }
                try handle.write(contentsOf: reply.body)
                sha256.update(data: reply.body)
                done += Int64(reply.body.count)
                progress(done, artifact.size)
            }
        } catch let error as KizunaError {
            throw error
        } catch {
            throw KizunaError(.internalError, "Could not write \(partial.path): \(error.localizedDescription)")
        }
        let local = hex(sha256.finalize())
        guard local == artifact.sha256 else {
            try? FileManager.default.removeItem(at: partial)
            throw KizunaError(.corrupted, "\(name) arrived with SHA-256 \(local), not \(artifact.sha256): discarded; download it again.")
        }
        do {
            if FileManager.default.fileExists(atPath: destination.path) {
                _ = try FileManager.default.replaceItemAt(destination, withItemAt: partial)
            } else {
                try FileManager.default.moveItem(at: partial, to: destination)
            }
        } catch {
            throw KizunaError(.internalError, "Could not write \(destination.path): \(error.localizedDescription)")
        }
        return artifact
    }

    /// The time one chunk may take, up or down.
    static let chunkTimeout = Duration.seconds(600)
    /// The bytes asked for per ranged request.
    static let downloadChunk: Int64 = 16 << 20

    /// Waits before try `failures + 1`: what the server asked for (`Retry-After`), else 1 s, 2 s, 4 s ….
    private static func pause(after error: KizunaError, failures: Int) async {
        try? await Task.sleep(for: error.retryAfter.map { .seconds($0) } ?? .milliseconds(500 << failures))
    }

    static func isWorthRetrying(_ error: KizunaError) -> Bool {
        [.transport, .timeout, .unavailable, .storeUnavailable, .throttled, .rateLimited, .conflict].contains(error.code)
    }

    private func uploadsPath(_ app: String, _ release: String) throws(KizunaError) -> String {
        "/v1/admin/apps/\(try pathSegment(app))/releases/\(try pathSegment(release))/uploads"
    }
}
