import Crypto
import Foundation
import KizunaCore
import NIOCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a stored blob is: its size and the checksums computed while it streamed in.
package struct BlobInfo: Sendable, Hashable {
    package var size: Int64
    package var sha256: String
    package var md5: String
}

/// Large files (release artifacts; chat attachments later), streamed in and out without ever sitting whole in
/// memory: ``FileBlobStore`` (a directory) or ``S3BlobStore`` (an S3-compatible bucket).
package protocol BlobStore: Sendable {
    /// Stores what `body` yields under `key`, computing size and checksums on the way; the blob is visible only once
    /// complete (a crash or a failed stream leaves nothing under `key`).
    func put<Body: AsyncSequence & Sendable>(_ key: String, from body: Body) async throws -> BlobInfo where Body.Element == ByteBuffer
    /// The bytes of `key` in `range` (the whole blob when `nil`), read a chunk at a time as they are asked for.
    func read(_ key: String, range: Range<Int64>?) async throws -> BlobBytes
    /// The size of `key`. - Throws: `not_found`.
    func size(_ key: String) async throws -> Int64
    /// Removes `key`; a missing blob is not an error.
    func delete(_ key: String) async throws
}

/// A blob's bytes, read a chunk at a time only as the consumer asks (a slow client never makes the server buffer
/// the file).
package struct BlobBytes: AsyncSequence, Sendable {
    package typealias Element = ByteBuffer
    /// Makes each iteration's reader.
    let open: @Sendable () -> (() async throws -> ByteBuffer?)

    package func makeAsyncIterator() -> Iterator { Iterator(next: open()) }

    package struct Iterator: AsyncIteratorProtocol {
        let nextChunk: () async throws -> ByteBuffer?
        init(next: @escaping () async throws -> ByteBuffer?) { nextChunk = next }
        package mutating func next() async throws -> ByteBuffer? { try await nextChunk() }
    }
}

/// Blobs as files in a directory (by default `blobs/` in the data directory): written to a temporary file, flushed
/// to disk, then renamed into place, mode 0600.
package struct FileBlobStore: BlobStore {
    package let directory: URL
    /// The bytes read per chunk.
    static let chunk = 256 * 1024

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
        let temporary = directory.appendingPathComponent(".tmp-\(UUID().uuidString)")
        let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw KizunaError(.internalError, "Could not create a file in the blob store.") }
        var sha256 = SHA256()
        var md5 = Insecure.MD5()
        var size: Int64 = 0
        do {
            defer { close(descriptor) }
            for try await buffer in body {
                try buffer.withUnsafeReadableBytes { bytes in
                    sha256.update(bufferPointer: bytes)
                    md5.update(bufferPointer: bytes)
                    var offset = 0
                    while offset < bytes.count {
                        let written = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                        if written < 0 && errno == EINTR { continue }
                        guard written > 0 else { throw KizunaError(.internalError, "Writing to the blob store failed (errno \(errno)).") }
                        offset += written
                    }
                }
                size += Int64(buffer.readableBytes)
            }
            guard fsync(descriptor) == 0 else { throw KizunaError(.internalError, "Flushing the blob store failed (errno \(errno)).") }
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
        guard rename(temporary.path, target.path) == 0 else {
            try? FileManager.default.removeItem(at: temporary)
            throw KizunaError(.internalError, "Could not put a blob in place (errno \(errno)).")
        }
        return BlobInfo(size: size, sha256: hex(sha256.finalize()), md5: hex(md5.finalize()))
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
}
