import Logging
import Synchronization

/// Keeps what is logged through it, for tests that check a warning is given or count the server's request-log
/// lines (requests as the server saw them, however many connections carried them).
public struct RecordingLogHandler: LogHandler {
    public final class Records: Sendable {
        public let entries = Mutex<[(level: Logger.Level, message: String, metadata: Logger.Metadata)]>([])

        public init() {}

        /// The messages logged at `level`.
        public func messages(at level: Logger.Level) -> [String] {
            entries.withLock { $0.filter { $0.level == level }.map(\.message) }
        }

        /// The messages logged at `level` with their metadata (the event's over the logger's).
        public func events(at level: Logger.Level) -> [(message: String, metadata: Logger.Metadata)] {
            entries.withLock { $0.filter { $0.level == level }.map { ($0.message, $0.metadata) } }
        }
    }

    let records: Records
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .trace

    /// A handler that records into `records`.
    public init(records: Records) {
        self.records = records
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        records.entries.withLock { $0.append((event.level, event.message.description, merged)) }
    }

    /// A logger that records into a new ``Records``.
    public static func logger() -> (Logger, Records) {
        let records = Records()
        return (Logger(label: "test") { _ in RecordingLogHandler(records: records) }, records)
    }
}
