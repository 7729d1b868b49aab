import Foundation
import KizunaCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Whole-file writes that a crash cannot tear: the SDK's state files and the secure store's items go through here.
enum AtomicFile {
    /// Replaces `url` with `data`: a new 0600 temporary file in the same directory, flushed, then `rename(2)`d over
    /// `url`. Readers see the old file or the new one; a crash leaves at worst a stray `.tmp` file.
    static func replace(_ url: URL, with data: Data) throws(KizunaError) {
        let temporary = temporaryURL(next: url)
        do throws(KizunaError) {
            try writeNew(temporary, data)
            guard rename(temporary.path, url.path) == 0 else { throw failure("replace", url) }
        } catch {
            unlink(temporary.path)
            throw error
        }
    }

    /// The contents of `url`, creating it with `make()` first if it does not exist. Racing creators agree: the
    /// file appears whole, through `link(2)`, or not at all, and the loser reads the winner's bytes.
    static func createOnce(_ url: URL, _ make: () throws(KizunaError) -> Data) throws(KizunaError) -> Data {
        if let existing = FileManager.default.contents(atPath: url.path) { return existing }
        let temporary = temporaryURL(next: url)
        defer { unlink(temporary.path) }
        try writeNew(temporary, try make())
        guard link(temporary.path, url.path) == 0 || errno == EEXIST else { throw failure("create", url) }
        guard let created = FileManager.default.contents(atPath: url.path) else { throw failure("read", url) }
        return created
    }

    /// Whether `name` is a temporary file left by an interrupted write.
    static func isTemporary(_ name: String) -> Bool { name.hasPrefix(".") && name.hasSuffix(".tmp") }

    private static func temporaryURL(next url: URL) -> URL {
        url.deletingLastPathComponent().appendingPathComponent(".\(UUID().uuidString).tmp")
    }

    /// Writes `data` to a new file readable only by its owner, flushed to disk before it is renamed or linked.
    private static func writeNew(_ url: URL, _ data: Data) throws(KizunaError) {
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else { throw failure("create", url) }
        defer { close(descriptor) }
        let written = data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let count = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += count
            }
            return true
        }
        guard written, fsync(descriptor) == 0 else { throw failure("write", url) }
    }

    private static func failure(_ action: String, _ url: URL) -> KizunaError {
        KizunaError(.internalError, "Could not \(action) \(url.path): \(String(cString: strerror(errno))).")
    }
}
