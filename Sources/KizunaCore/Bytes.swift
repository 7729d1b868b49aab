import Crypto
import Foundation

/// Lowercase hex. Table-driven: it runs per request for ETags, where `String(format:)` per byte is slow.
package func hex(_ data: some Sequence<UInt8>) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var bytes: [UInt8] = []
    bytes.reserveCapacity(data.underestimatedCount * 2)
    for byte in data {
        bytes.append(digits[Int(byte >> 4)])
        bytes.append(digits[Int(byte & 0x0F)])
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// The bytes of hex text (either case), as ``hex(_:)`` writes it; `nil` for an odd length or any other character
/// (a sign or a space too, which `UInt8(_:radix:)` would let through).
package func hexDecoded(_ text: some StringProtocol) -> [UInt8]? {
    func value(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
    let digits = Array(text.utf8)
    guard digits.count % 2 == 0 else { return nil }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(digits.count / 2)
    for index in stride(from: 0, to: digits.count, by: 2) {
        guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
        bytes.append(high << 4 | low)
    }
    return bytes
}

/// Base64url without padding (RFC 4648 §5): safe in URLs, headers and cookies as it is.
package func base64URL(_ data: Data) -> String {
    // Mapped byte by byte: Foundation's replacingOccurrences goes through NSString, which showed in the data API's
    // profile (every page's nextToken is base64url).
    var bytes = Array(data.base64EncodedData())
    while bytes.last == UInt8(ascii: "=") { bytes.removeLast() }
    for index in bytes.indices {
        if bytes[index] == UInt8(ascii: "+") {
            bytes[index] = UInt8(ascii: "-")
        } else if bytes[index] == UInt8(ascii: "/") {
            bytes[index] = UInt8(ascii: "_")
        }
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// The bytes of base64url text without padding, as ``base64URL(_:)`` writes it; `nil` for any other character or
/// an impossible length.
package func base64URLDecoded(_ text: some StringProtocol) -> Data? {
    guard !text.isEmpty, text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else { return nil }
    var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
    return Data(base64Encoded: base64)
}

/// Lowercase hex SHA-256 of `text`'s UTF-8. What Kizuna stores for secrets with 128 or more random bits (tokens,
/// codes): a fast hash is enough when there is nothing to brute-force.
package func sha256Hex(_ text: String) -> String {
    hex(SHA256.hash(data: Data(text.utf8)))
}

/// `count` bytes from the system's secure random generator.
package func randomBytes(_ count: Int) -> Data {
    SymmetricKey(size: .init(bitCount: count * 8)).withUnsafeBytes { Data($0) }
}

/// Compares two byte strings in time that depends only on their lengths.
package func constantTimeEquals(_ lhs: some Collection<UInt8>, _ rhs: some Collection<UInt8>) -> Bool {
    guard lhs.count == rhs.count else { return false }
    var difference: UInt8 = 0
    for (left, right) in zip(lhs, rhs) { difference |= left ^ right }
    return difference == 0
}
