import Foundation

/// JSON text read directly into a ``JSONValue``, without `JSONDecoder`'s `Codable` walk (which tries each JSON type
/// in turn and builds an error for every miss): what stored documents, records and request bodies are read with. It
/// accepts RFC 8259 JSON in UTF-8 as `JSONDecoder` does — a trailing comma in an array or object too — and reads the
/// same values: numbers as `Double` (one that overflows is refused), strings validated as UTF-8 with their escapes and
/// surrogate pairs, the first of repeated keys kept.
extension JSONValue {
    /// Why a text is not JSON, and where.
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The offset of the byte where reading stopped.
        public let offset: Int
        /// What was wrong there.
        public let reason: String

        public var description: String { "not valid JSON at byte \(offset): \(reason)" }

        /// Where reading stopped in `text` (the text read), as a person finds it in an editor: "line 3, column 14:
        /// expected ',' or '}' in an object". Lines and columns count from 1; a column counts characters.
        public func description(in text: String) -> String {
            let before = String(decoding: text.utf8.prefix(offset), as: UTF8.self)
            let lines = before.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
            let (line, column) = (lines.count, (lines.last?.count ?? 0) + 1)
            return "line \(line), column \(column): \(reason)"
        }
    }

    /// The deepest nesting of arrays and objects read, as `JSONDecoder` limits it, so a hostile text cannot exhaust
    /// the stack.
    public static let maximumParsingDepth = 512

    /// Reads UTF-8 JSON text.
    /// - Throws: ``ParseError`` naming the byte where the text stops being JSON.
    public init(parsing data: Data) throws {
        self = try data.withUnsafeBytes { try Self.parse($0) }
    }

    /// Reads JSON text.
    /// - Throws: ``ParseError`` naming the byte where the text stops being JSON.
    public init(parsing text: String) throws {
        var text = text
        self = try text.withUTF8 { try Self.parse(UnsafeRawBufferPointer($0)) }
    }

    /// Reads UTF-8 JSON bytes.
    /// - Throws: ``ParseError`` naming the byte where the text stops being JSON.
    public init(parsing bytes: [UInt8]) throws {
        self = try bytes.withUnsafeBytes { try Self.parse($0) }
    }

    private static func parse(_ bytes: UnsafeRawBufferPointer) throws -> JSONValue {
        var parser = JSONParser(bytes: bytes)
        let value = try parser.value()
        parser.skipWhitespace()
        guard parser.index == bytes.count else { throw parser.failure("unexpected text after the value") }
        return value
    }
}

/// A recursive-descent reader over the text's bytes.
private struct JSONParser {
    let bytes: UnsafeRawBufferPointer
    var index = 0
    var depth = 0

    init(bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    func failure(_ reason: String) -> JSONValue.ParseError {
        JSONValue.ParseError(offset: index, reason: reason)
    }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    mutating func value() throws -> JSONValue {
        skipWhitespace()
        guard index < bytes.count else { throw failure("the text ends where a value should be") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): return try literal("true", .bool(true))
        case UInt8(ascii: "f"): return try literal("false", .bool(false))
        case UInt8(ascii: "n"): return try literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw failure("expected a value")
        }
    }

    private mutating func literal(_ word: StaticString, _ value: JSONValue) throws -> JSONValue {
        let count = word.utf8CodeUnitCount
        guard bytes.count - index >= count, memcmp(bytes.baseAddress! + index, word.utf8Start, count) == 0 else {
            throw failure("expected \(word)")
        }
        index += count
        return value
    }

    /// Enters an object or array at its opening byte.
    private mutating func enter() throws {
        depth += 1
        guard depth <= JSONValue.maximumParsingDepth else { throw failure("nested deeper than \(JSONValue.maximumParsingDepth) levels") }
        index += 1
        skipWhitespace()
    }

    /// Whether the container ends here, at `close`: at once (an empty one), or after an element — past its comma, a
    /// `close` ends it too (a trailing comma, which `JSONDecoder` accepts). False: another element follows.
    private mutating func ends(at close: UInt8, afterElement: Bool, inside what: String) throws -> Bool {
        if afterElement {
            skipWhitespace()
            guard index < bytes.count else { throw failure("the text ends inside \(what)") }
            guard bytes[index] == UInt8(ascii: ",") || bytes[index] == close else {
                throw failure("expected ',' or '\(Character(Unicode.Scalar(close)))' in \(what)")
            }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                skipWhitespace()
            }
        }
        guard index < bytes.count, bytes[index] == close else { return false }
        index += 1
        depth -= 1
        return true
    }

    private mutating func object() throws -> JSONValue {
        try enter()
        var members: [String: JSONValue] = [:]
        var afterElement = false
        while try !ends(at: UInt8(ascii: "}"), afterElement: afterElement, inside: "an object") {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw failure("expected a member's name in quotes") }
            let key = try string()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw failure("expected ':' after a member's name") }
            index += 1
            let member = try value()
            if members[key] == nil { members[key] = member }
            afterElement = true
        }
        return .object(members)
    }

    private mutating func array() throws -> JSONValue {
        try enter()
        var elements: [JSONValue] = []
        var afterElement = false
        while try !ends(at: UInt8(ascii: "]"), afterElement: afterElement, inside: "an array") {
            elements.append(try value())
            afterElement = true
        }
        return .array(elements)
    }

    /// A string: its bytes as they are up to the first escape, then decoded escape by escape.
    private mutating func string() throws -> String {
        index += 1
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = try Self.text(UnsafeRawBufferPointer(rebasing: bytes[start..<index]), at: start)
                index += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { throw failure("a control character must be escaped in a string") }
            index += 1
        }
        var decoded = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return try decoded.withUnsafeBytes { try Self.text($0, at: start) }
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { break }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escape)
                case UInt8(ascii: "b"): decoded.append(0x08)
                case UInt8(ascii: "f"): decoded.append(0x0C)
                case UInt8(ascii: "n"): decoded.append(0x0A)
                case UInt8(ascii: "r"): decoded.append(0x0D)
                case UInt8(ascii: "t"): decoded.append(0x09)
                case UInt8(ascii: "u"): try unicodeEscape(into: &decoded)
                default:
                    index -= 1
                    throw failure("'\\\(Character(Unicode.Scalar(escape)))' is not an escape")
                }
            default:
                guard byte >= 0x20 else { throw failure("a control character must be escaped in a string") }
                decoded.append(byte)
                index += 1
            }
        }
        throw failure("the text ends inside a string")
    }

    private static func text(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws -> String {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw JSONValue.ParseError(offset: offset, reason: "a string is not valid UTF-8")
        }
        return text
    }

    /// `\uXXXX` (after the `u`), a surrogate pair as two of them, appended as UTF-8.
    private mutating func unicodeEscape(into decoded: inout [UInt8]) throws {
        var scalar = try hex4()
        if (0xD800..<0xDC00).contains(scalar) {
            guard bytes.count - index >= 2, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                throw failure("a high surrogate must be followed by a low one")
            }
            index += 2
            let low = try hex4()
            guard (0xDC00..<0xE000).contains(low) else { throw failure("a high surrogate must be followed by a low one") }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        } else if (0xDC00..<0xE000).contains(scalar) {
            throw failure("a low surrogate without a high one")
        }
        guard let unicode = Unicode.Scalar(scalar) else { throw failure("not a Unicode scalar") }
        decoded.append(contentsOf: String(Character(unicode)).utf8)
    }

    private mutating func hex4() throws -> UInt32 {
        guard bytes.count - index >= 4 else { throw failure("expected four hexadecimal digits") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("expected a hexadecimal digit")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    /// A number as RFC 8259 writes one: small integers summed directly, anything else read by `Double`'s parser.
    private mutating func number() throws -> Double {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        func digits() -> Int {
            let from = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return index - from
        }
        let integerStart = index
        let integerDigits = digits()
        guard integerDigits > 0 else { throw failure("expected a digit") }
        guard integerDigits == 1 || bytes[integerStart] != UInt8(ascii: "0") else {
            index = integerStart
            throw failure("a number cannot start with 0")
        }
        var isInteger = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { throw failure("expected a digit after '.'") }
            isInteger = false
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { throw failure("expected a digit in the exponent") }
            isInteger = false
        }
        if isInteger, integerDigits <= 15 {
            var value: Int64 = 0
            for position in integerStart..<index { value = value * 10 + Int64(bytes[position] - UInt8(ascii: "0")) }
            return bytes[start] == UInt8(ascii: "-") ? -Double(value) : Double(value)
        }
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            index = start
            throw failure("\(text) does not fit a 64-bit floating-point number")
        }
        return value
    }
}
