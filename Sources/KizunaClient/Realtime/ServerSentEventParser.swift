/// One Server-Sent Event as dispatched by ``ServerSentEventParser``.
public struct ServerSentEvent: Sendable, Hashable {
    /// The event type (`message` when the stream named none).
    public var event: String
    /// The data lines, joined with `\n`.
    public var data: String
    /// The stream's last event id when this event was dispatched (empty if none was ever sent).
    public var lastEventID: String

    /// Creates an event.
    public init(event: String = "message", data: String, lastEventID: String = "") {
        self.event = event
        self.data = data
        self.lastEventID = lastEventID
    }
}

/// The `text/event-stream` parser of the HTML standard (§9.2.6), as a value fed with bytes.
///
/// Bytes may arrive split anywhere, even inside a UTF-8 sequence or between the CR and LF of a line ending: the
/// parser keeps the partial line until it is complete. It knows nothing of connections; the reconnecting stream
/// feeds it and reads ``lastEventID`` and ``retry`` from it.
public struct ServerSentEventParser: Sendable {
    private var line: [UInt8] = []
    private var afterCR = false
    private var atStart = true
    private var eventType = ""
    private var data = ""
    private var hasData = false
    /// The id of the last event that had one; sent back as `Last-Event-ID` when reconnecting.
    public private(set) var lastEventID = ""
    /// The reconnection delay the server asked for, in milliseconds.
    public private(set) var retry: Int?

    /// Creates a parser for a new stream, remembering `lastEventID` from an earlier connection.
    public init(lastEventID: String = "") {
        self.lastEventID = lastEventID
    }

    /// Feeds bytes and returns the events they completed, in order.
    public mutating func receive(_ bytes: some Sequence<UInt8>) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for byte in bytes {
            if afterCR {
                afterCR = false
                if byte == 0x0A { continue }  // the LF of a CRLF
            }
            switch byte {
            case 0x0D:
                afterCR = true
                endLine(into: &events)
            case 0x0A:
                endLine(into: &events)
            default:
                line.append(byte)
            }
        }
        return events
    }

    /// Starts over for a new connection: a partial event is dropped; the last event id and retry delay are kept.
    public mutating func reset() {
        let retry = retry
        self = ServerSentEventParser(lastEventID: lastEventID)
        self.retry = retry
    }

    private mutating func endLine(into events: inout [ServerSentEvent]) {
        var text = String(decoding: line, as: UTF8.self)
        line.removeAll(keepingCapacity: true)
        if atStart {
            atStart = false
            if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        }
        if text.isEmpty {
            dispatch(into: &events)
            return
        }
        if text.hasPrefix(":") { return }  // a comment, such as a keep-alive
        let field: Substring
        var value: Substring
        if let colon = text.firstIndex(of: ":") {
            field = text[..<colon]
            value = text[text.index(after: colon)...]
            if value.hasPrefix(" ") { value.removeFirst() }
        } else {
            field = text[...]
            value = ""
        }
        switch field {
        case "event": eventType = String(value)
        case "data":
            if hasData { data += "\n" }
            data += value
            hasData = true
        case "id" where !value.contains("\u{0}"): lastEventID = String(value)
        case "retry" where !value.isEmpty && value.allSatisfy(\.isASCIIDigit): retry = Int(value)
        default: break
        }
    }

    private mutating func dispatch(into events: inout [ServerSentEvent]) {
        defer {
            eventType = ""
            data = ""
            hasData = false
        }
        guard hasData else { return }
        events.append(ServerSentEvent(event: eventType.isEmpty ? "message" : eventType, data: data, lastEventID: lastEventID))
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
