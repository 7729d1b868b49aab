import Foundation
import KizunaServer
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `kizuna serve`'s log handler: swift-log's `StreamLogHandler` line, byte for byte ("TIMESTAMP LEVEL LABEL: k=v …
/// [SOURCE] MESSAGE"), into ``BufferedStandardError``, with the timestamp formatted once a second instead of once a
/// line (`localtime` and `strftime` were a visible part of a request's cost at the default level).
struct ServerLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    init(label: String, level: Logger.Level, metadataProvider: Logger.MetadataProvider?) {
        self.label = label
        logLevel = level
        self.metadataProvider = metadataProvider
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// The line is built in one string, metadata sorted by key: a request's logger gets its own `hb.request.id`, so
    /// the handler's metadata changes per request and nothing formatted ahead of time would be reused.
    func log(event: LogEvent) {
        BufferedStandardError.shared.append(line(for: event), urgent: event.level > .info)
    }

    /// The line `log(event:)` writes, newline included.
    func line(for event: LogEvent) -> String {
        let entries = Self.entries(logger: metadata, provided: metadataProvider?.get(), event: event.metadata, error: event.error)
        let message = event.message.description
        var line = start(event.level, capacity: 160 + message.utf8.count)
        for (key, value) in entries {
            if case .string(let text) = value { Self.append(key, text, to: &line) } else { Self.append(key, value.description, to: &line) }
        }
        Self.finish(&line, source: event.source, message: message)
        return line
    }

    /// "TIMESTAMP LEVEL LABEL:", the start of every line, in a string with room for the rest.
    private func start(_ level: Logger.Level, capacity: Int) -> String {
        var line = Self.clock.now()
        line.reserveCapacity(capacity)
        line += " "
        line += level.rawValue
        if !label.isEmpty {
            line += " "
            line += label
        }
        line += ":"
        return line
    }

    /// One " KEY=VALUE" of a line's metadata.
    private static func append(_ key: String, _ value: String, to line: inout String) {
        line += " "
        line += key
        line += "="
        line += value
    }

    /// " [SOURCE] MESSAGE" and the newline; a message in parts (joined by spaces) is not put together first.
    private static func finish(_ line: inout String, source: String, message: String, _ more: String? = nil, _ last: String? = nil) {
        line += " ["
        line += source
        line += "] "
        line += message
        if let more {
            line += " "
            line += more
        }
        if let last {
            line += " "
            line += last
        }
        line += "\n"
    }

    /// A line's metadata sorted by key, a later source winning over an earlier one for the same key: the logger's, the
    /// provider's, the event's, then the error's. Gathered into one array: merging dictionaries (a copy and a rehash
    /// each) was most of the request log's cost.
    static func entries(
        logger: Logger.Metadata, provided: Logger.Metadata?, event: Logger.Metadata?, error: (any Error)?
    ) -> [(key: String, value: Logger.MetadataValue)] {
        let failure: Logger.Metadata? = error.map { ["error.message": "\($0)", "error.type": "\(String(reflecting: type(of: $0)))"] }
        var entries: [(key: String, value: Logger.MetadataValue)] = []
        entries.reserveCapacity(logger.count + (provided?.count ?? 0) + (event?.count ?? 0) + (failure?.count ?? 0))
        for (key, value) in logger where provided?[key] == nil && event?[key] == nil && failure?[key] == nil {
            entries.append((key, value))
        }
        for (key, value) in provided ?? [:] where event?[key] == nil && failure?[key] == nil { entries.append((key, value)) }
        for (key, value) in event ?? [:] where failure?[key] == nil { entries.append((key, value)) }
        for (key, value) in failure ?? [:] { entries.append((key, value)) }
        entries.sort { $0.key < $1.key }
        return entries
    }

    /// The local time to the second, as `StreamLogHandler` writes it, formatted when the second changes.
    static let clock = Clock()

    final class Clock: Sendable {
        private let last = Mutex<(second: time_t, text: String)>((-1, ""))

        func now() -> String {
            let second = time(nil)
            if let text = last.withLock({ $0.second == second ? $0.text : nil }) { return text }
            var buffer = [CChar](repeating: 0, count: 64)
            var seconds = second
            var local = tm()
            localtime_r(&seconds, &local)
            strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%S%z", &local)
            let text = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            last.withLock { $0 = (second, text) }
            return text
        }
    }
}

extension ServerLogHandler: RequestLineSink {
    func write(_ request: RequestLine) -> Bool {
        guard writesDirectly else { return false }
        let time = Self.clock.now()
        BufferedStandardError.shared.append(urgent: false) { bytes in append(request, time: time, to: &bytes) }
        return true
    }

    /// The request log's line built directly — the same bytes `line(for:)` makes of the event — when the logger carries
    /// only its request id (which the line's own replaces) and no provider adds metadata; nil otherwise.
    func line(for request: RequestLine) -> String? {
        guard writesDirectly else { return nil }
        var bytes: [UInt8] = []
        append(request, time: Self.clock.now(), to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether a request line may skip the event: the logger's metadata is its request id alone (the line's own
    /// replaces it) and no provider adds any.
    private var writesDirectly: Bool {
        metadataProvider == nil && metadata.count == 1 && metadata.keys.first == "hb.request.id"
    }

    /// Appends the line to `bytes` where the log waits, with no string of it made first: `line(for:)`'s layout, with
    /// RequestLine.metadata's keys in the sorted order it writes them.
    private func append(_ request: RequestLine, time: String, to bytes: inout [UInt8]) {
        func add(_ text: String) { bytes.append(contentsOf: text.utf8) }
        func add(_ text: StaticString) { text.withUTF8Buffer { bytes.append(contentsOf: $0) } }
        add(time)
        add(" info")
        if !label.isEmpty {
            add(" ")
            add(label)
        }
        add(": duration_ms=")
        add(request.durationMilliseconds)
        add(" hb.request.id=")
        add(request.id)
        add(" http.route=")
        add(request.route)
        add(" http.status=")
        add(request.status)
        add(" [")
        add(RequestLine.source)
        add("] ")
        add(request.method)
        add(" ")
        add(request.path)
        add(" ")
        add(request.status)
        add("\n")
    }
}
