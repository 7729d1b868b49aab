import Logging
import Synchronization

/// Keeps what is logged through it, for tests that check a warning is given.
struct RecordingLogHandler: LogHandler {
    final class Records: Sendable {
        let entries = Mutex<[(level: Logger.Level, message: String)]>([])

        /// The messages logged at `level`.
        func messages(at level: Logger.Level) -> [String] {
            entries.withLock { $0.filter { $0.level == level }.map(\.message) }
        }
    }

    let records: Records
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        records.entries.withLock { $0.append((event.level, event.message.description)) }
    }

    /// A logger that records into a new ``Records``.
    static func logger() -> (Logger, Records) {
        let records = Records()
        return (Logger(label: "test") { _ in RecordingLogHandler(records: records) }, records)
    }
}
