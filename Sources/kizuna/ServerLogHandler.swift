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

    /// Metadata sorted by key, gathered (and the message described) before the log's lock is taken: a request's logger
    /// gets its own `hb.request.id`, so the handler's metadata changes per request and nothing formatted ahead of time
    /// would be reused.
    func log(event: LogEvent) {
        let (time, entries, message) = (Self.clock.now(), entries(of: event), event.message.description)
        BufferedStandardError.shared.append(urgent: event.level > .info) { bytes in
            write(event.level, time: time, entries: entries, source: event.source, message: message, to: &bytes)
        }
    }

    /// The line `log(event:)` writes, newline included.
    func line(for event: LogEvent) -> String {
        var bytes: [UInt8] = []
        let message = event.message.description
        write(event.level, time: Self.clock.now(), entries: entries(of: event), source: event.source, message: message, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    private func entries(of event: LogEvent) -> [(key: String, value: Logger.MetadataValue)] {
        Self.entries(logger: metadata, provided: metadataProvider?.get(), event: event.metadata, error: event.error)
    }

    private func write(
        _ level: Logger.Level, time: String, entries: [(key: String, value: Logger.MetadataValue)], source: String, message: String,
        to bytes: inout [UInt8]
    ) {
        start(level, time: time, to: &bytes)
        for (key, value) in entries {
            if case .string(let text) = value { Self.entry(key, text, to: &bytes) } else { Self.entry(key, value.description, to: &bytes) }
        }
        Self.finish(source: source, message: message, to: &bytes)
    }

    // Every line's bytes, written where the log waits with no string made of the line first, in three parts shared by
    // the event's line and the request log's.

    /// "TIMESTAMP LEVEL LABEL:", the start of every line.
    private func start(_ level: Logger.Level, time: String, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: time.utf8)
        bytes.append(UInt8(ascii: " "))
        bytes.append(contentsOf: level.rawValue.utf8)
        if !label.isEmpty {
            bytes.append(UInt8(ascii: " "))
            bytes.append(contentsOf: label.utf8)
        }
        bytes.append(UInt8(ascii: ":"))
    }

    /// One " KEY=VALUE" of a line's metadata.
    private static func entry(_ key: String, _ value: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: " "))
        bytes.append(contentsOf: key.utf8)
        bytes.append(UInt8(ascii: "="))
        bytes.append(contentsOf: value.utf8)
    }

    /// " [SOURCE] MESSAGE" and the newline; a message in parts (joined by spaces) is not put together first.
    private static func finish(source: String, message: String, _ more: String? = nil, _ last: String? = nil, to bytes: inout [UInt8]) {
        bytes.append(contentsOf: " [".utf8)
        bytes.append(contentsOf: source.utf8)
        bytes.append(contentsOf: "] ".utf8)
        bytes.append(contentsOf: message.utf8)
        if let more {
            bytes.append(UInt8(ascii: " "))
            bytes.append(contentsOf: more.utf8)
        }
        if let last {
            bytes.append(UInt8(ascii: " "))
            bytes.append(contentsOf: last.utf8)
        }
        bytes.append(UInt8(ascii: "\n"))
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
        BufferedStandardError.shared.append(urgent: false) { bytes in write(request, time: time, to: &bytes) }
        return true
    }

    /// The request log's line built directly — the same bytes `line(for:)` makes of the event — when the logger carries
    /// only its request id (which the line's own replaces) and no provider adds metadata; nil otherwise.
    func line(for request: RequestLine) -> String? {
        guard writesDirectly else { return nil }
        var bytes: [UInt8] = []
        write(request, time: Self.clock.now(), to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether a request line may skip the event: the logger's metadata is its request id alone (the line's own
    /// replaces it) and no provider adds any.
    private var writesDirectly: Bool {
        metadataProvider == nil && metadata.count == 1 && metadata.keys.first == "hb.request.id"
    }

    /// The line of the event `RequestLine` stands for, without the event: its metadata in the sorted order the event's
    /// line would have, its message in parts.
    private func write(_ request: RequestLine, time: String, to bytes: inout [UInt8]) {
        start(.info, time: time, to: &bytes)
        Self.entry("duration_ms", request.durationMilliseconds, to: &bytes)
        Self.entry("hb.request.id", request.id, to: &bytes)
        Self.entry("http.route", request.route, to: &bytes)
        Self.entry("http.status", request.status, to: &bytes)
        Self.finish(source: RequestLine.source, message: request.method, request.path, request.status, to: &bytes)
    }
}
