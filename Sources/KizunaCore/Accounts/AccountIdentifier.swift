import Foundation

/// The name a person signs in with — an email address or a username — in the one form the server stores and
/// compares.
///
/// Normalisation is Unicode NFKC, then case folding, then trimming: `Ｍｉｏ@Example.COM`, `mio@example.com` and
/// `ｍｉｏ＠ｅｘａｍｐｌｅ．ｃｏｍ` are one identifier, so look-alikes in another width or case cannot register twice.
public struct AccountIdentifier: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The normalised text.
    public let normalized: String

    /// Which kind of identifier it is.
    public enum Kind: String, Sendable, Hashable, Codable {
        case email, username
    }

    /// Normalises `text` (no validation; see ``AccountValidation/identifier``).
    public init(_ text: String) {
        normalized = Self.normalize(text)
    }

    /// `email` when the text has an `@`, else `username`.
    public var kind: Kind { normalized.contains("@") ? .email : .username }

    public var description: String { normalized }

    /// NFKC, case-folded (locale-independent), trimmed.
    public static func normalize(_ text: String) -> String {
        text.precomposedStringWithCompatibilityMapping
            .folding(options: [.caseInsensitive], locale: nil)
            .precomposedStringWithCompatibilityMapping
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    public init(from decoder: any Decoder) throws {
        self.init(try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(normalized)
    }
}
