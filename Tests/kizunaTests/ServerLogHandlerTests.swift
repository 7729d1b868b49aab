import Foundation
import KizunaServer
import Logging
import Testing

@testable import kizuna

/// `kizuna serve`'s log lines keep swift-log's `StreamLogHandler` shape — "TIMESTAMP LEVEL LABEL: k=v … [SOURCE]
/// MESSAGE", metadata sorted by key — however the handler builds them.
@Suite("kizuna serve's log lines")
struct ServerLogHandlerTests {
    struct Failure: Error, CustomStringConvertible {
        var description: String { "disk full" }
    }

    static func event(_ metadata: Logger.Metadata?, level: Logger.Level = .info, error: (any Error)? = nil) -> LogEvent {
        LogEvent(
            level: level, message: "POST /v1/apps/shop/config:fetch 200", error: error, metadata: metadata, source: "KizunaServer",
            file: #fileID, function: #function, line: #line)
    }

    /// The line without its timestamp, which must be swift-log's local time to the second.
    static func body(of line: String) throws -> Substring {
        let timestamp = try #require(line.firstMatch(of: try Regex(#"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d{4} "#)))
        return line[timestamp.range.upperBound...]
    }

    @Test func metadataFromTheLoggerTheProviderAndTheEventIsSortedByKey() throws {
        var handler = ServerLogHandler(label: "kizuna", level: .info, metadataProvider: Logger.MetadataProvider { ["trace": "t1"] })
        handler[metadataKey: "hb.request.id"] = "abc"
        let line = handler.line(for: Self.event(["http.status": "200", "duration_ms": .stringConvertible(1.5), "tags": ["a", "b"]]))
        #expect(
            try Self.body(of: line)
                == "info kizuna: duration_ms=1.5 hb.request.id=abc http.status=200 tags=[\"a\", \"b\"] trace=t1 [KizunaServer] POST /v1/apps/shop/config:fetch 200\n"
        )
    }

    @Test func theEventWinsOverTheLoggerAndAnErrorIsNamed() throws {
        var handler = ServerLogHandler(label: "", level: .info, metadataProvider: nil)
        handler[metadataKey: "step"] = "1"
        let line = handler.line(for: Self.event(["step": "2"], level: .error, error: Failure()))
        #expect(
            try Self.body(of: line)
                == "error: error.message=disk full error.type=\(String(reflecting: Failure.self)) step=2 [KizunaServer] POST /v1/apps/shop/config:fetch 200\n"
        )
        let plain = ServerLogHandler(label: "kizuna", level: .info, metadataProvider: nil).line(for: Self.event(nil))
        #expect(try Self.body(of: plain) == "info kizuna: [KizunaServer] POST /v1/apps/shop/config:fetch 200\n")
    }

    /// The request log's direct line is the line the handler makes of the same event, byte for byte; a logger with
    /// more metadata, or a provider, leaves it to the ordinary path.
    @Test func theRequestLogWritesTheSameLineDirectly() throws {
        let request = RequestLine(
            method: "POST", path: "/v1/apps/shop/config:fetch", status: "200", route: "/v1/apps/{app}/config:fetch", id: "0a1b",
            durationMilliseconds: "0.123")
        var handler = ServerLogHandler(label: "kizuna", level: .info, metadataProvider: nil)
        handler[metadataKey: "hb.request.id"] = .stringConvertible(42)
        let event = LogEvent(
            level: .info, message: request.message, error: nil, metadata: request.metadata, source: RequestLine.source, file: #fileID,
            function: #function, line: #line)
        let expected = handler.line(for: event)
        #expect(try Self.body(of: expected).hasPrefix("info kizuna: duration_ms=0.123 hb.request.id=0a1b http.route="))
        #expect(try Self.body(of: #require(handler.line(for: request))) == Self.body(of: expected))

        var more = handler
        more[metadataKey: "tenant"] = "a"
        #expect(more.line(for: request) == nil)
        #expect(ServerLogHandler(label: "kizuna", level: .info, metadataProvider: Logger.MetadataProvider { [:] }).line(for: request) == nil)
    }
}
