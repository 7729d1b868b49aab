/// A request head read straight from a connection's bytes, as far as ``DeviceByteLane`` needs it: where the request
/// ends, and whether it is a device request the lane may answer.
///
/// It reads only what it reads exactly as NIO's parser would. Anything else — another HTTP version, a bare line feed,
/// a folded or malformed line, `Transfer-Encoding`, a repeated or non-numeric `Content-Length`, `Upgrade`, `Expect`,
/// `Connection` other than `keep-alive`, `CONNECT`, a head past the lane's limits — leaves the head
/// ``Scan/unframed``, and the lane hands the rest of the connection to the parser, which answers or refuses it as it
/// always has.
struct RawRequestHead {
    /// The bytes from the request line through the blank line after the last header.
    let headLength: Int
    /// The body's length (`Content-Length`, or none).
    let contentLength: Int
    /// A `POST` to a device endpoint carrying no header that sends it its route's way (`Origin`, for CORS).
    let device: Device?
    /// `If-None-Match`, its lines joined as `HTTPFields` joins them.
    let ifNoneMatch: String?

    struct Device {
        let endpoint: DeviceController.Endpoint
        let app: String
        let path: String
    }

    enum Scan {
        /// The head has not all arrived.
        case incomplete
        /// Not a head the lane reads with certainty.
        case unframed
        case head(RawRequestHead)
    }

    /// The most header fields the lane reads; the parser's own limit (Hummingbird's 1,000) is far above it.
    static let maxFields = 100

    /// Reads the head at the front of `bytes`; one longer than `maxLength` bytes or with more than ``maxFields``
    /// fields is ``Scan/unframed``.
    static func scan(_ bytes: UnsafeRawBufferPointer, maxLength: Int) -> Scan {
        let end = min(bytes.count, maxLength)
        var lineStart = 0
        var method = 0..<0
        var target = 0..<0
        var contentLength: Int?
        var origin = false
        var ifNoneMatch: [Range<Int>] = []
        var fields = 0
        while true {
            guard let feed = bytes[lineStart..<end].firstIndex(of: .lineFeed) else {
                return bytes.count >= maxLength ? .unframed : .incomplete
            }
            guard feed > lineStart, bytes[feed - 1] == .carriageReturn else { return .unframed }
            let line = lineStart..<(feed - 1)
            lineStart = feed + 1
            if method.isEmpty {
                guard let (verb, path) = requestLine(bytes, line) else { return .unframed }
                (method, target) = (verb, path)
                continue
            }
            if line.isEmpty { break }
            fields += 1
            guard fields <= maxFields else { return .unframed }
            guard let colon = bytes[line].firstIndex(of: .colon), colon > line.lowerBound,
                bytes[line.lowerBound..<colon].allSatisfy(\.isToken)
            else { return .unframed }
            var value = (colon + 1)..<line.upperBound
            while let first = value.first, bytes[first].isWhitespace { value = value.dropFirst() }
            while let last = value.last, bytes[last].isWhitespace { value = value.dropLast() }
            guard bytes[value].allSatisfy(\.isFieldText) else { return .unframed }
            switch Name(bytes[line.lowerBound..<colon]) {
            case .contentLength:
                guard contentLength == nil, (1...15).contains(value.count), bytes[value].allSatisfy(\.isDigit) else { return .unframed }
                contentLength = bytes[value].reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
            case .connection:
                guard Name(bytes[value]) == .keepAlive else { return .unframed }
            case .transferEncoding, .upgrade, .expect:
                return .unframed
            case .origin:
                origin = true
            case .ifNoneMatch:
                ifNoneMatch.append(value)
            case .keepAlive, .other:
                break
            }
        }
        var device: Device?
        if !origin, bytes[method].elementsEqual("POST".utf8), let (endpoint, app) = DeviceFastLane.endpoint(path: bytes[target]) {
            device = Device(endpoint: endpoint, app: app, path: String(decoding: bytes[target], as: UTF8.self))
        }
        return .head(
            RawRequestHead(
                headLength: lineStart, contentLength: contentLength ?? 0, device: device,
                ifNoneMatch: ifNoneMatch.isEmpty ? nil : ifNoneMatch.map { String(decoding: bytes[$0], as: UTF8.self) }.joined(separator: ", ")))
    }

    /// `METHOD SP target SP HTTP/1.1`: the method's and the target's ranges.
    private static func requestLine(_ bytes: UnsafeRawBufferPointer, _ line: Range<Int>) -> (Range<Int>, Range<Int>)? {
        guard let space = bytes[line].firstIndex(of: .space), space > line.lowerBound,
            let second = bytes[(space + 1)..<line.upperBound].firstIndex(of: .space), second > space + 1
        else { return nil }
        let method = line.lowerBound..<space
        let target = (space + 1)..<second
        guard bytes[method].allSatisfy(\.isToken), !bytes[method].elementsEqual("CONNECT".utf8),
            bytes[target].allSatisfy({ $0 > .space && $0 < 0x7F }),
            bytes[(second + 1)..<line.upperBound].elementsEqual("HTTP/1.1".utf8)
        else { return nil }
        return (method, target)
    }

    /// The header names (and the one value) the lane looks at, matched without regard to case.
    private enum Name {
        case contentLength, connection, transferEncoding, upgrade, expect, origin, ifNoneMatch, keepAlive, other

        private static let names: [(Name, [UInt8])] = [
            (.contentLength, Array("content-length".utf8)), (.connection, Array("connection".utf8)),
            (.transferEncoding, Array("transfer-encoding".utf8)), (.upgrade, Array("upgrade".utf8)), (.expect, Array("expect".utf8)),
            (.origin, Array("origin".utf8)), (.ifNoneMatch, Array("if-none-match".utf8)), (.keepAlive, Array("keep-alive".utf8)),
        ]

        init(_ bytes: Slice<UnsafeRawBufferPointer>) {
            // `| 0x20` lowers a letter and leaves `-` as it is; no other byte of a token turns into a letter or `-`.
            self = Self.names.first { $0.1.count == bytes.count && zip($0.1, bytes).allSatisfy { $0 == $1 | 0x20 } }?.0 ?? .other
        }
    }
}

extension UInt8 {
    fileprivate static let lineFeed = UInt8(ascii: "\n")
    fileprivate static let carriageReturn = UInt8(ascii: "\r")
    fileprivate static let colon = UInt8(ascii: ":")
    fileprivate static let space = UInt8(ascii: " ")

    fileprivate var isWhitespace: Bool { self == .space || self == UInt8(ascii: "\t") }
    fileprivate var isDigit: Bool { self >= UInt8(ascii: "0") && self <= UInt8(ascii: "9") }
    /// A field value's byte: visible, a space or tab, or beyond ASCII (RFC 9110 §5.5).
    fileprivate var isFieldText: Bool { isWhitespace || (self > .space && self != 0x7F) }

    /// A `tchar` (RFC 9110 §5.6.2).
    fileprivate var isToken: Bool {
        switch self {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
            UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default: false
        }
    }
}
