/// JSON text written directly, without `JSONEncoder`'s `Codable` walk: what a large answer (a page of records) is
/// serialized with. The output is what ``WireFormat/canonicalEncoder()`` writes for the same value (keys sorted,
/// slashes unescaped, whole numbers without a fraction), so readers cannot tell the two apart.
extension JSONValue {
    /// The value as UTF-8 JSON text, object keys sorted.
    public var jsonBytes: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        write(into: &bytes)
        return bytes
    }

    /// The value as UTF-8 JSON text for a person to read, as `JSONEncoder`'s `prettyPrinted` writes it: two spaces a
    /// level, `"key" : value`, keys sorted, an empty array or object over an empty line.
    public var prettyJSONBytes: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(512)
        writePretty(into: &bytes, indent: 0)
        return bytes
    }

    private func writePretty(into bytes: inout [UInt8], indent: Int) {
        switch self {
        case .array([]), .object([:]):
            let isArray = self == .array([])
            bytes += [isArray ? UInt8(ascii: "[") : UInt8(ascii: "{"), 0x0A, 0x0A]
            bytes += repeatElement(UInt8(ascii: " "), count: indent)
            bytes.append(isArray ? UInt8(ascii: "]") : UInt8(ascii: "}"))
        case .array(let elements):
            bytes += [UInt8(ascii: "["), 0x0A]
            for (position, element) in elements.enumerated() {
                if position > 0 { bytes += [UInt8(ascii: ","), 0x0A] }
                bytes += repeatElement(UInt8(ascii: " "), count: indent + 2)
                element.writePretty(into: &bytes, indent: indent + 2)
            }
            bytes.append(0x0A)
            bytes += repeatElement(UInt8(ascii: " "), count: indent)
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes += [UInt8(ascii: "{"), 0x0A]
            for (position, key) in members.keys.sorted().enumerated() {
                if position > 0 { bytes += [UInt8(ascii: ","), 0x0A] }
                bytes += repeatElement(UInt8(ascii: " "), count: indent + 2)
                Self.write(key, into: &bytes)
                bytes += [UInt8(ascii: " "), UInt8(ascii: ":"), UInt8(ascii: " ")]
                members[key, default: .null].writePretty(into: &bytes, indent: indent + 2)
            }
            bytes.append(0x0A)
            bytes += repeatElement(UInt8(ascii: " "), count: indent)
            bytes.append(UInt8(ascii: "}"))
        default:
            write(into: &bytes)
        }
    }

    private func write(into bytes: inout [UInt8]) {
        switch self {
        case .null: bytes += Self.nullText
        case .bool(let flag): bytes += flag ? Self.trueText : Self.falseText
        case .number(let number): Self.write(number, into: &bytes)
        case .string(let text): Self.write(text, into: &bytes)
        case .array(let elements):
            bytes.append(UInt8(ascii: "["))
            for (position, element) in elements.enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                element.write(into: &bytes)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object(let members):
            bytes.append(UInt8(ascii: "{"))
            for (position, key) in members.keys.sorted().enumerated() {
                if position > 0 { bytes.append(UInt8(ascii: ",")) }
                Self.write(key, into: &bytes)
                bytes.append(UInt8(ascii: ":"))
                members[key, default: .null].write(into: &bytes)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }

    private static let nullText = Array("null".utf8)
    private static let trueText = Array("true".utf8)
    private static let falseText = Array("false".utf8)

    /// A whole number within ±2^53 without a fraction, as `JSONEncoder` writes it; other finite numbers as Swift's
    /// shortest round-tripping form; a non-finite one (which JSON cannot hold) as `null`.
    private static func write(_ number: Double, into bytes: inout [UInt8]) {
        guard number.isFinite else {
            bytes += nullText
            return
        }
        if number.rounded() == number, number.magnitude <= 9_007_199_254_740_992 {
            bytes += Array(String(Int64(number)).utf8)
        } else {
            bytes += Array(number.description.utf8)
        }
    }

    /// A string with `"`, `\` and control characters escaped, as `JSONEncoder` escapes them.
    private static func write(_ text: String, into bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): bytes += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x0A: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0x08: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "b")]
            case 0x0C: bytes += [UInt8(ascii: "\\"), UInt8(ascii: "f")]
            case 0x00..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes += [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
