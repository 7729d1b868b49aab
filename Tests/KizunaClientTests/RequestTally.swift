import Logging

@testable import KizunaClient
@testable import KizunaServer

/// Counts the requests a ``LiveServer`` answered whose request-log line (`POST /v1/apps/shop/gate:check 200`) starts
/// with a prefix: requests as the server saw them, however many connections carried them (a connection count cannot
/// tell two requests on one keep-alive connection from one). The server logs the line before it writes the answer,
/// so once the client has its answer, the request is counted.
final class RequestTally: Sendable {
    private let prefix: String
    private let seen = Locked(0)

    /// A tally of the requests whose log line starts with `prefix`, such as `"POST /v1/apps/shop/gate:check "`.
    init(_ prefix: String) {
        self.prefix = prefix
    }

    /// How many have been answered so far.
    var count: Int { seen.withLock { $0 } }

    /// Makes the server log to this tally, at the request log's level (its log goes nowhere else): pass it to
    /// ``LiveServer/run(announcesToken:configure:_:)`` as `configure: { tally.observe(&$0) }`.
    func observe(_ configuration: inout KizunaConfiguration) {
        configuration.logLevel = .info
        configuration.logHandler = { _ in Handler(tally: self) }
    }

    fileprivate func record(_ line: String) {
        guard line.hasPrefix(prefix) else { return }
        seen.withLock { $0 += 1 }
    }

    private struct Handler: LogHandler {
        let tally: RequestTally
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .info

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            tally.record(event.message.description)
        }
    }
}
