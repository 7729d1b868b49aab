import Foundation
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
        var merged = metadata
        if let provided = metadataProvider?.get(), !provided.isEmpty { merged.merge(provided) { _, new in new } }
        if let explicit = event.metadata, !explicit.isEmpty { merged.merge(explicit) { _, new in new } }
        if let error = event.error {
            merged["error.message"] = "\(error)"
            merged["error.type"] = "\(String(reflecting: type(of: error)))"
        }
        let message = event.message.description
        var line = Self.clock.now()
        line.reserveCapacity(160 + message.utf8.count)
        line += " "
        line += event.level.rawValue
        if !label.isEmpty {
            line += " "
            line += label
        }
        line += ":"
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) {
            line += " "
            line += key
            line += "="
            if case .string(let text) = value { line += text } else { line += value.description }
        }
        line += " ["
        line += event.source
        line += "] "
        line += message
        line += "\n"
        return line
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
