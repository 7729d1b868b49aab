import Logging

/// One request's log line, as ``EdgeMiddleware`` writes it: `info`, source `KizunaServer`, the message
/// `METHOD PATH STATUS` and the request id, route, status and duration as metadata.
package struct RequestLine: Sendable {
    package let method: String
    package let path: String
    package let status: String
    package let route: String
    package let id: String
    package let durationMilliseconds: String

    package static let source = "KizunaServer"

    package init(method: String, path: String, status: String, route: String, id: String, durationMilliseconds: String) {
        self.method = method
        self.path = path
        self.status = status
        self.route = route
        self.id = id
        self.durationMilliseconds = durationMilliseconds
    }

    package var message: Logger.Message { "\(method) \(path) \(status)" }

    package var metadata: Logger.Metadata {
        [
            // The logger's own id formats itself again for every line; this is the same text, formatted once.
            "hb.request.id": .string(id),
            "http.route": .string(route),
            "http.status": .string(status),
            "duration_ms": .string(durationMilliseconds),
        ]
    }

    /// Logs the line through `logger`: straight into a ``RequestLineSink`` handler that takes it, otherwise as any
    /// other `info` line.
    package func log(to logger: Logger) {
        guard logger.logLevel <= .info else { return }
        if let sink = logger.handler as? any RequestLineSink, sink.write(self) { return }
        logger.info(message, metadata: metadata, source: Self.source)
    }
}

/// A log handler that writes a ``RequestLine`` itself, as the line it would make of the same event but without the
/// dictionaries and the message string on the way (`kizuna serve`'s handler: the request log was a tenth of a small
/// request's cost).
package protocol RequestLineSink: LogHandler {
    /// Writes `line` and returns true, or returns false to have it logged the ordinary way.
    func write(_ line: RequestLine) -> Bool
}
