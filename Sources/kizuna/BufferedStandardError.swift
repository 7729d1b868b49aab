import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Standard error for `kizuna serve`'s log (``ServerLogHandler`` writes to it), written the way nginx writes its access log: `info` and quieter lines
/// (one per request at the default level) collect in memory and go out together at least every 100 ms or per 64 KB,
/// in one `write` each; `notice` and louder ones go out at once, with whatever waited before them. One line per
/// request through swift-log's standard error — a locked `fwrite` and an `fflush`, so a syscall, per line — cost the
/// device routes 12–17 % of their throughput.
///
/// What waits is written when the process exits normally; a crash can lose at most the last 100 ms of request lines.
enum BufferedStandardError {
    /// The one buffer behind every logger of the process.
    static let shared = Buffer()

    final class Buffer: Sendable {
        private let pending = Mutex<[UInt8]>([])
        static let limit = 64 << 10

        fileprivate init() {
            let flusher = Thread { [unowned self] in
                while true {
                    Thread.sleep(forTimeInterval: 0.1)
                    self.flush()
                }
            }
            flusher.name = "kizuna-log"
            flusher.start()
            atexit { BufferedStandardError.shared.flush() }
        }

        /// Adds the line `write` appends to the bytes that wait, under the buffer's lock (no string of it is made first);
        /// an `urgent` one (`notice` or louder) is written at once, with what waited before it.
        func append(urgent: Bool, _ write: (inout [UInt8]) -> Void) {
            let ready: [UInt8]? = pending.withLock { pending in
                write(&pending)
                guard urgent || pending.count >= Self.limit else { return nil }
                defer { pending.removeAll(keepingCapacity: true) }
                return pending
            }
            if let ready { Self.emit(ready) }
        }

        /// Writes what waits.
        func flush() {
            let ready: [UInt8]? = pending.withLock { pending in
                guard !pending.isEmpty else { return nil }
                defer { pending.removeAll(keepingCapacity: true) }
                return pending
            }
            if let ready { Self.emit(ready) }
        }

        private static func emit(_ bytes: [UInt8]) {
            bytes.withUnsafeBytes { buffer in
                var offset = 0
                while offset < buffer.count {
                    #if canImport(Glibc)
                        let written = Glibc.write(2, buffer.baseAddress! + offset, buffer.count - offset)
                    #else
                        let written = Darwin.write(2, buffer.baseAddress! + offset, buffer.count - offset)
                    #endif
                    if written < 0 && errno == EINTR { continue }
                    guard written > 0 else { return }
                    offset += written
                }
            }
        }
    }
}
