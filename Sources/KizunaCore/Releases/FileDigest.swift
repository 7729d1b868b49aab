import Crypto
import Foundation

/// Checksums of a file read a chunk at a time, so a multi-gigabyte artifact is never in memory.
package enum FileDigest {
    /// The hex SHA-256 and MD5 of the file at `url`, and its size.
    package static func of(_ url: URL) throws -> (sha256: String, md5: String, size: Int64) {
        var sha256 = SHA256()
        var md5 = Insecure.MD5()
        let size = try read(url) { chunk in
            sha256.update(data: chunk)
            md5.update(data: chunk)
        }
        return (hex(sha256.finalize()), hex(md5.finalize()), size)
    }

    /// The hex SHA-256 of the file at `url` and its size (half the work of ``of(_:)`` when the MD5 is not wanted).
    package static func sha256(of url: URL) throws -> (sha256: String, size: Int64) {
        var sha256 = SHA256()
        let size = try read(url) { sha256.update(data: $0) }
        return (hex(sha256.finalize()), size)
    }

    /// Hands the file to `body` a MiB at a time. - Returns: its size.
    private static func read(_ url: URL, _ body: (Data) -> Void) throws -> Int64 {
        guard let handle = FileHandle(forReadingAtPath: url.path) else {
            throw KizunaError(.notFound, "Cannot read \(url.path).")
        }
        defer { try? handle.close() }
        var size: Int64 = 0
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            body(chunk)
            size += Int64(chunk.count)
        }
        return size
    }
}
