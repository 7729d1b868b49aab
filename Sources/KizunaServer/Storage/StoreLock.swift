import Foundation
import KizunaCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An exclusive lock on an SQLite store, held for a server's whole life, so that a second `kizuna serve` on the same
/// data directory is refused instead of running beside the first (two processes would each queue their own writers
/// and fight over SQLite's lock, and each would believe its in-process caches).
///
/// It is an `flock` on `<store>.lock`: the kernel drops it when the process exits however it exits, so a killed
/// server leaves nothing to clean up. CLI store commands do not take it and keep working beside a running server.
final class StoreLock: Sendable {
    /// The lock file's descriptor while the lock is held; `nil` once released.
    private let descriptor: Mutex<Int32?>
    let path: String

    /// Takes the lock of the store at `storePath`.
    /// - Throws: `unavailable` naming the store (and the holder's pid when known) when another server holds it.
    init(store storePath: String) throws {
        path = storePath + ".lock"
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw KizunaError(.internalError, "Cannot open the store's lock file \(path): \(String(cString: strerror(errno))).")
        }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            let holder = (try? String(contentsOfFile: path, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
            close(descriptor)
            throw KizunaError(
                .unavailable,
                "Another kizuna serve\(holder.isEmpty ? "" : " (pid \(holder))") is already using the store \(storePath). "
                    + "Stop it first, or give this one its own --data-dir; several servers share a store only on PostgreSQL.")
        }
        let pid = Array("\(getpid())\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = pid.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        self.descriptor = Mutex(descriptor)
    }

    /// Releases the lock (once; later calls do nothing). The server calls it as it stops, after closing the store:
    /// whoever still holds a reference to the server's parts does not keep the store from the next server.
    func release() {
        descriptor.withLock { descriptor in
            if let open = descriptor { close(open) }  // closing the descriptor releases the flock
            descriptor = nil
        }
    }

    deinit {
        release()
    }
}
