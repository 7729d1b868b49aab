/// An APNs device token as Kizuna keeps and sends it: the lowercase hex of its bytes.
///
/// Apps have sent tokens in three forms over the years, and the registry takes the two that hold the whole token:
/// - hex of every byte, any case (`70a7ff15c1233c44…`) — what `deviceToken.map { String(format: "%02x", $0) }.joined()`
///   builds, and what the SDK sends;
/// - the description of `NSData` before iOS 13 (`<70a7ff15 c1233c44 …>`), which old apps still send: normalized.
///
/// The description of `Data` since iOS 13 (`{length = 32, bytes = 0x70a7ff15 … c1233c44}`) shows only some of the
/// bytes, so it is refused with an explanation rather than stored as a token that can never be delivered to. Tokens
/// have been 32 bytes, but Apple says they vary: any length in ``byteCount`` is taken, an odd number of digits never.
public struct APNsDeviceToken: Sendable, Hashable, CustomStringConvertible {
    /// The lowercase hex of the token's bytes.
    public let hex: String

    /// The token lengths taken, in bytes: shorter or longer is not a token.
    public static let byteCount = 16...100

    /// How to build the token's text in the app, for error messages.
    public static let howToBuild = #"deviceToken.map { String(format: "%02x", $0) }.joined()"#

    /// The token whose bytes these are.
    /// - Throws: `validation_failed` (field `token`) when there are too few or too many.
    public init(bytes: some Collection<UInt8>) throws(KizunaError) {
        try self.init(hex: KizunaCore.hex(bytes))
    }

    /// Reads a token as an app sent it: hex, or the pre-iOS 13 `<…>` description.
    /// - Throws: `validation_failed` (field `token`) naming what is wrong: the iOS 13 description (truncated), a
    ///   character that is not a hex digit, an odd number of digits, a length no token has.
    public init(parsing text: String) throws(KizunaError) {
        let trimmed = text.trimmingWhitespace
        if trimmed.hasPrefix("{"), trimmed.contains("length ="), trimmed.contains("bytes =") {
            throw Self.invalid(
                "This is the description iOS 13 and later give a token's Data, which shows only some of its bytes; send the hex of every byte: \(Self.howToBuild)."
            )
        }
        var digits = trimmed
        if digits.hasPrefix("<"), digits.hasSuffix(">") {
            digits = String(digits.dropFirst().dropLast()).split(separator: " ").joined()
        }
        try self.init(hex: digits)
    }

    private init(hex text: String) throws(KizunaError) {
        var hex = ""
        hex.reserveCapacity(text.utf8.count)
        for (offset, scalar) in text.unicodeScalars.enumerated() {
            switch scalar {
            case "0"..."9", "a"..."f": hex.unicodeScalars.append(scalar)
            case "A"..."F": hex.unicodeScalars.append(Unicode.Scalar(scalar.value + 32)!)
            default:
                throw Self.invalid("A device token is hex digits; character \(offset + 1) is '\(scalar)'. Build it with \(Self.howToBuild).")
            }
        }
        guard hex.utf8.count % 2 == 0 else {
            throw Self.invalid("A device token has two hex digits a byte; this one has \(hex.utf8.count) digits, an odd number.")
        }
        guard Self.byteCount.contains(hex.utf8.count / 2) else {
            throw Self.invalid(
                "A device token is \(Self.byteCount.lowerBound) to \(Self.byteCount.upperBound) bytes; this one is \(hex.utf8.count / 2).")
        }
        self.hex = hex
    }

    public var description: String { hex }

    private static func invalid(_ message: String) -> KizunaError {
        KizunaError(.validationFailed, message, field: "token")
    }
}

extension String {
    /// The text without leading and trailing spaces, tabs and line breaks.
    fileprivate var trimmingWhitespace: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
