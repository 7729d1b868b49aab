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
    var metadata: Logger.Metadata = [:] {
        didSet { prettyMetadata = Self.prettify(metadata) }
    }
    var metadataProvider: Logger.MetadataProvider?
    private var prettyMetadata: String?

    init(label: String, level: Logger.Level, metadataProvider: Logger.MetadataProvider?) {
        self.label = label
        logLevel = level
        self.metadataProvider = metadataProvider
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var pretty = prettyMetadata
        let provided = metadataProvider?.get() ?? [:]
        if !provided.isEmpty || !(event.metadata ?? [:]).isEmpty || event.error != nil {
            var merged = metadata
            merged.merge(provided) { _, new in new }
            if let explicit = event.metadata { merged.merge(explicit) { _, new in new } }
            if let error = event.error {
                merged["error.message"] = "\(error)"
                merged["error.type"] = "\(String(reflecting: type(of: error)))"
            }
            pretty = Self.prettify(merged)
        }
        BufferedStandardError.shared.append(
            "\(Self.clock.now()) \(event.level)\(label.isEmpty ? "" : " ")\(label):\(pretty.map { " \($0)" } ?? "") [\(event.source)] \(event.message)\n",
            urgent: event.level > .info)
    }

    private static func prettify(_ metadata: Logger.Metadata) -> String? {
        metadata.isEmpty ? nil : metadata.sorted { $0.key < $1.key }.map { "\($0)=\($1)" }.joined(separator: " ")
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
