import Testing

@testable import KizunaClient

@Suite("Server-Sent Events parser")
struct ServerSentEventParserTests {
    static let stream =
        "\u{FEFF}retry: 2000\n\n: keep-alive\r\nevent: config\r\nid: 7\r\ndata: {\"version\":3}\r\n\r\nid: 8\rdata: a\rdata:b\r\rdata\n\nevent: gate\n\nid\ndata: ええ\n\n"
    static let expected = [
        ServerSentEvent(event: "config", data: #"{"version":3}"#, lastEventID: "7"),
        ServerSentEvent(event: "message", data: "a\nb", lastEventID: "8"),
        ServerSentEvent(event: "message", data: "", lastEventID: "8"),
        ServerSentEvent(event: "message", data: "ええ", lastEventID: ""),
    ]

    @Test func parsesTheWholeStreamAtOnce() {
        var parser = ServerSentEventParser()
        #expect(parser.receive(Array(Self.stream.utf8)) == Self.expected)
        #expect(parser.retry == 2000)
        #expect(parser.lastEventID == "")
    }

    /// Chunks end anywhere: inside a UTF-8 sequence, between CR and LF, inside a field name.
    @Test(arguments: 1...7)
    func givesTheSameEventsHoweverTheBytesAreSplit(chunkSize: Int) {
        var parser = ServerSentEventParser()
        let bytes = Array(Self.stream.utf8)
        var events: [ServerSentEvent] = []
        for start in stride(from: 0, to: bytes.count, by: chunkSize) {
            events += parser.receive(bytes[start..<min(start + chunkSize, bytes.count)])
        }
        #expect(events == Self.expected)
    }

    @Test func anEventWithoutABlankLineIsNotDispatchedAndResetKeepsTheIdAndRetry() {
        var parser = ServerSentEventParser()
        #expect(parser.receive(Array("retry: 5000\nid: 41\ndata: done\n\nid: 42\ndata: cut off".utf8)).map(\.lastEventID) == ["41"])
        parser.reset()
        #expect(parser.lastEventID == "42" && parser.retry == 5000)
        #expect(parser.receive(Array("\n\n".utf8)).isEmpty)
        #expect(parser.receive(Array("retry: soon\nid: a\u{0}b\ndata: x\n\n".utf8)) == [ServerSentEvent(data: "x", lastEventID: "42")])
        #expect(parser.retry == 5000)
    }
}
