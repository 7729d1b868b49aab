import Foundation
import KizunaCore
import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Blobs as files in a directory (by default `blobs/` in the data directory): written to a temporary file, flushed
/// to disk, then renamed into place, mode 0600.
package struct FileBlobStore: BlobStore {
    package let directory: URL
    /// The bytes read per chunk.
    static let chunk = 256 * 1024

    package var chunkSize: Int64 { 16 << 20 }

    package init(directory: URL) {
        self.directory = directory
    }

    private func path(_ key: String) throws -> URL {
        guard !key.isEmpty, !key.hasPrefix("."), key.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
            throw KizunaError(.internalError, "Not a blob key.")
        }
        return directory.appendingPathComponent(key)
    }

    package func put<Body: AsyncSequence & Sendable>(_ key: String, from body: Body) async throws -> BlobInfo where Body.Element == ByteBuffer {
        let target = try path(key)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let temporary = directory.appendingPathComponent("\(Self.temporaryPrefix)\(UUID().uuidString)")
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw KizunaError(.internalError, "Could not create a file in the blob store.") }
        var hasher = BlobHasher()
        do {
            defer { close(descriptor) }
            for try await buffer in body {
                try Self.writeAll(buffer, to: descriptor)
                hasher.update(buffer)
            }
            try Self.flush(descriptor)
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
        guard rename(temporary.path, target.path) == 0 else {
            try? FileManager.default.removeItem(at: temporary)
            throw KizunaError(.internalError, "Could not put a blob in place (errno \(errno)).")
        }
        return hasher.finalize()
    }

    package func size(_ key: String) async throws -> Int64 {
        let attributes = try? FileManager.default.attributesOfItem(atPath: try path(key).path)
        guard let size = (attributes?[.size] as? NSNumber)?.int64Value else { throw KizunaError(.notFound, "No such blob.") }
        return size
    }

    package func read(_ key: String, range: Range<Int64>?) async throws -> BlobBytes {
        let file = try path(key).path
        let wanted: Range<Int64>
        if let range { wanted = range } else { wanted = 0..<(try await size(key)) }
        return BlobBytes {
            var handle: FileHandle?
            var remaining = wanted.upperBound - wanted.lowerBound
            return {
                guard remaining > 0 else {
                    try? handle?.close()
                    return nil
                }
                if handle == nil {
                    guard let opened = FileHandle(forReadingAtPath: file) else { throw KizunaError(.notFound, "No such blob.") }
                    try opened.seek(toOffset: UInt64(wanted.lowerBound))
                    handle = opened
                }
                guard let data = try handle?.read(upToCount: min(Self.chunk, Int(remaining))), !data.isEmpty else {
                    throw KizunaError(.internalError, "A blob ended before its length.")
                }
                remaining -= Int64(data.count)
                return ByteBuffer(bytes: data)
            }
        }
    }

    package func delete(_ key: String) async throws {
        try? FileManager.default.removeItem(at: try path(key))
    }

    // MARK: Partial blobs

    package func beginPartial(_ key: String) async throws -> PartialBlob {
        _ = try path(key)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let token = "\(Self.partialPrefix)\(UUID().uuidString)"
        let descriptor = open(directory.appendingPathComponent(token).path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw KizunaError(.internalError, "Could not create a file in the blob store.") }
        close(descriptor)
        return PartialBlob(token: token)
    }

    package func append<Body: AsyncSequence & Sendable>(
        _ key: String, to partial: PartialBlob, total: Int64, from body: Body, hashing: inout BlobHasher?
    ) async throws -> (PartialBlob, failure: (any Error)?) where Body.Element == ByteBuffer {
        let file = try partialPath(partial)
        let descriptor = open(file.path, O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw KizunaError(.notFound, "The upload's bytes are gone from the blob store.") }
        defer { close(descriptor) }
        // Fewer bytes than recorded: another writer cut the file back, and what it holds cannot be trusted.
        // (Its size by seeking to its end: Glibc's `stat` struct is not visible to release builds under
        // MemberImportVisibility.)
        let size = lseek(descriptor, 0, SEEK_END)
        guard size >= 0 else { throw KizunaError(.internalError, "Could not read a file in the blob store.") }
        guard Int64(size) >= partial.received else { throw PartialBlobLost() }
        // Bytes a crash left past what was recorded are written again.
        guard ftruncate(descriptor, off_t(partial.received)) == 0, lseek(descriptor, off_t(partial.received), SEEK_SET) >= 0 else {
            throw KizunaError(.internalError, "Could not resume a file in the blob store (errno \(errno)).")
        }
        var kept = partial
        let failure = try await consume(body) { buffer in
            try Self.writeAll(buffer, to: descriptor)
            hashing?.update(buffer)
            kept.received += Int64(buffer.readableBytes)
        }
        // A write or this failing (the disk, not the client): nothing of this request is sure to be on disk, and the
        // next one starts where this one did.
        try Self.flush(descriptor)
        return (kept, failure)
    }

    package func finishPartial(_ key: String, _ partial: PartialBlob) async throws {
        let source = try partialPath(partial)
        let target = try path(key)
        // Finished already (a finish run again): the partial file is gone and the blob is there.
        if !FileManager.default.fileExists(atPath: source.path), FileManager.default.fileExists(atPath: target.path) { return }
        guard rename(source.path, target.path) == 0 else {
            throw KizunaError(.internalError, "Could not put a blob in place (errno \(errno)).")
        }
    }

    package func abortPartial(_ key: String, _ partial: PartialBlob) async throws {
        try? FileManager.default.removeItem(at: try partialPath(partial))
    }

    private func partialPath(_ partial: PartialBlob) throws -> URL {
        let name = partial.token.dropFirst(Self.partialPrefix.count)
        guard partial.token.hasPrefix(Self.partialPrefix), UUID(uuidString: String(name)) != nil else {
            throw KizunaError(.internalError, "Not a partial blob.")
        }
        return directory.appendingPathComponent(partial.token)
    }

    // MARK: Leftovers

    /// Removes the temporary files of writes a crash cut short (a `.tmp-` file untouched for `age`; a write in
    /// progress touches its file all the time). Partial blobs are the registry's to expire, not this.
    /// - Returns: How many were removed.
    @discardableResult
    package func sweepTemporaryFiles(olderThan age: TimeInterval = 3600) -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        var removed = 0
        for name in names where name.hasPrefix(Self.temporaryPrefix) {
            let file = directory.appendingPathComponent(name)
            guard let modified = (try? FileManager.default.attributesOfItem(atPath: file.path))?[.modificationDate] as? Date,
                modified.timeIntervalSinceNow < -age
            else { continue }
            if (try? FileManager.default.removeItem(at: file)) != nil { removed += 1 }
        }
        return removed
    }

    // MARK: Writing

    static let temporaryPrefix = ".tmp-"
    static let partialPrefix = ".partial-"

    private static func writeAll(_ buffer: ByteBuffer, to descriptor: Int32) throws {
        try buffer.withUnsafeReadableBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { throw KizunaError(.internalError, "Writing to the blob store failed (errno \(errno)).") }
                offset += written
            }
        }
    }

    private static func flush(_ descriptor: Int32) throws {
        guard fsync(descriptor) == 0 else { throw KizunaError(.internalError, "Flushing the blob store failed (errno \(errno)).") }
    }
}
