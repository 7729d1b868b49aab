extension DeviceRequest {
    /// Reads a device's body in the shape the SDK and apps send it — one JSON object of the known fields, strings
    /// without escapes, flat attributes — in one pass over the bytes, without Foundation's `JSONDecoder`, which cost
    /// more than the rest of a `config:fetch` together.
    ///
    /// `nil` for anything else: unknown or repeated fields, escapes, a value of the wrong type, malformed JSON. The
    /// caller then decodes the body with `JSONDecoder`, which accepts what this leaves out and names what is wrong,
    /// so a body this reads gets the very value `JSONDecoder` would give, and every other body the same answer as
    /// before.
    public init?(plainJSON bytes: UnsafeRawBufferPointer) {
        var reader = PlainJSONReader(bytes)
        var device = DeviceContext(appVersion: "")
        var seen: UInt16 = 0
        var knownVersion: Int64?
        guard reader.take(UInt8(ascii: "{")) else { return nil }
        if !reader.take(UInt8(ascii: "}")) {
            repeat {
                guard let key = reader.string(), reader.take(UInt8(ascii: ":")),
                    let index = Field.keys.firstIndex(where: { $0.elementsEqual(key) }), let field = Field(rawValue: index)
                else { return nil }
                let bit: UInt16 = 1 << index
                guard seen & bit == 0 else { return nil }
                seen |= bit
                switch field {
                case .appVersion:
                    guard let text = reader.string() else { return nil }
                    device.appVersion = String(decoding: text, as: UTF8.self)
                case .buildNumber: guard reader.optionalText(into: &device.buildNumber) else { return nil }
                case .platform:
                    if reader.takeNull() { break }
                    guard let text = reader.string(), let platform = Platform(rawValue: String(decoding: text, as: UTF8.self)) else {
                        return nil
                    }
                    device.platform = platform
                case .osVersion: guard reader.optionalText(into: &device.osVersion) else { return nil }
                case .locale: guard reader.optionalText(into: &device.locale) else { return nil }
                case .country: guard reader.optionalText(into: &device.country) else { return nil }
                case .installId: guard reader.optionalText(into: &device.installId) else { return nil }
                case .attributes:
                    if reader.takeNull() { break }
                    guard let attributes = reader.attributes() else { return nil }
                    device.attributes = attributes
                case .knownVersion:
                    if reader.takeNull() { break }
                    guard let version = reader.integer() else { return nil }
                    knownVersion = version
                }
            } while reader.take(UInt8(ascii: ","))
            guard reader.take(UInt8(ascii: "}")) else { return nil }
        }
        guard seen & (1 << Field.appVersion.rawValue) != 0, reader.atEnd else { return nil }
        self.init(device: device, knownVersion: knownVersion)
    }

    /// The fields the reader knows, named as their JSON keys; a field's bit in `seen` is its raw value.
    private enum Field: Int, CaseIterable {
        case appVersion, buildNumber, platform, osVersion, locale, country, installId, attributes, knownVersion

        static let keys: [[UInt8]] = allCases.map { Array(String(describing: $0).utf8) }
    }
}

/// The few JSON forms ``DeviceRequest/init(plainJSON:)`` reads; every method answers `nil` or `false` where the bytes
/// hold something else, and skips the whitespace after what it read.
private struct PlainJSONReader {
    private let bytes: UnsafeRawBufferPointer
    private var index = 0

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        skipWhitespace()
    }

    var atEnd: Bool { index == bytes.count }

    mutating func take(_ byte: UInt8) -> Bool {
        guard index < bytes.count, bytes[index] == byte else { return false }
        index += 1
        skipWhitespace()
        return true
    }

    mutating func takeNull() -> Bool {
        guard bytes.count - index >= 4, bytes[index] == UInt8(ascii: "n"), bytes[index + 1] == UInt8(ascii: "u"),
            bytes[index + 2] == UInt8(ascii: "l"), bytes[index + 3] == UInt8(ascii: "l")
        else { return false }
        index += 4
        skipWhitespace()
        return true
    }

    /// A string's bytes, for a string without escapes or control characters whose bytes are valid UTF-8.
    mutating func string() -> UnsafeRawBufferPointer.SubSequence? {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
        let start = index + 1
        var end = start
        while end < bytes.count, bytes[end] != UInt8(ascii: "\"") {
            guard bytes[end] >= 0x20, bytes[end] != UInt8(ascii: "\\") else { return nil }
            end += 1
        }
        guard end < bytes.count else { return nil }
        let text = bytes[start..<end]
        if text.contains(where: { $0 >= 0x80 }), !Self.isValidUTF8(text) { return nil }
        index = end + 1
        skipWhitespace()
        return text
    }

    private static func isValidUTF8(_ text: UnsafeRawBufferPointer.SubSequence) -> Bool {
        var iterator = text.makeIterator()
        var parser = Unicode.UTF8.ForwardParser()
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }

    /// A string or `null` into an optional field.
    mutating func optionalText(into field: inout String?) -> Bool {
        if takeNull() { return true }
        guard let text = string() else { return false }
        field = String(decoding: text, as: UTF8.self)
        return true
    }

    /// A whole number in JSON's form (no fraction, exponent or leading zero) that fits in 64 bits.
    mutating func integer() -> Int64? {
        guard let (text, isWhole) = number(), isWhole else { return nil }
        return Int64(String(decoding: text, as: UTF8.self))
    }

    /// An object of attributes, each a string, a finite number or a bool, no name twice.
    mutating func attributes() -> [String: AttributeValue]? {
        guard take(UInt8(ascii: "{")) else { return nil }
        var attributes: [String: AttributeValue] = [:]
        if take(UInt8(ascii: "}")) { return attributes }
        repeat {
            guard let key = string(), take(UInt8(ascii: ":")) else { return nil }
            let name = String(decoding: key, as: UTF8.self)
            guard attributes[name] == nil, let value = attribute() else { return nil }
            attributes[name] = value
        } while take(UInt8(ascii: ","))
        return take(UInt8(ascii: "}")) ? attributes : nil
    }

    private mutating func attribute() -> AttributeValue? {
        guard index < bytes.count else { return nil }
        switch bytes[index] {
        case UInt8(ascii: "\""): return string().map { .string(String(decoding: $0, as: UTF8.self)) }
        case UInt8(ascii: "t"): return literal("true") ? .bool(true) : nil
        case UInt8(ascii: "f"): return literal("false") ? .bool(false) : nil
        default:
            guard let (text, _) = number(), let value = Double(String(decoding: text, as: UTF8.self)), value.isFinite else {
                return nil
            }
            return .number(value)
        }
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard bytes.count - index >= count else { return false }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
        index += count
        skipWhitespace()
        return true
    }

    /// A number as JSON writes it: `-`? (`0` | [1-9][0-9]*) (`.` [0-9]+)? ([eE] [+-]? [0-9]+)?; whether it is whole.
    private mutating func number() -> (UnsafeRawBufferPointer.SubSequence, Bool)? {
        let (bytes, start) = (self.bytes, index)
        var end = index
        func digits() -> Int {
            let first = end
            while end < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[end]) { end += 1 }
            return end - first
        }
        if end < bytes.count, bytes[end] == UInt8(ascii: "-") { end += 1 }
        let integerStart = end
        let integerDigits = digits()
        guard integerDigits > 0, integerDigits == 1 || bytes[integerStart] != UInt8(ascii: "0") else { return nil }
        var isWhole = true
        if end < bytes.count, bytes[end] == UInt8(ascii: ".") {
            end += 1
            guard digits() > 0 else { return nil }
            isWhole = false
        }
        if end < bytes.count, bytes[end] == UInt8(ascii: "e") || bytes[end] == UInt8(ascii: "E") {
            end += 1
            if end < bytes.count, bytes[end] == UInt8(ascii: "+") || bytes[end] == UInt8(ascii: "-") { end += 1 }
            guard digits() > 0 else { return nil }
            isWhole = false
        }
        index = end
        skipWhitespace()
        return (bytes[start..<end], isWhole)
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }
}
