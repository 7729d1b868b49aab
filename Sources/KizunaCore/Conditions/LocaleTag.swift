import Foundation

/// A BCP 47 locale tag normalised for matching: lower case, `-` between subtags.
public struct LocaleTag: Sendable, Hashable, CustomStringConvertible {
    /// The normalised tag, such as `ja-jp`.
    public let description: String

    /// Normalises `text` (`ja_JP` and `ja-JP` both become `ja-jp`).
    public init(_ text: String) {
        // Devices send ASCII tags (`ja-JP`, `en_US`): mapped byte by byte, without Foundation.
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            description = String(
                decoding: text.utf8.map { byte in
                    switch byte {
                    case UInt8(ascii: "_"): UInt8(ascii: "-")
                    case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte + 0x20
                    default: byte
                    }
                }, as: UTF8.self)
        } else {
            description = text.replacingOccurrences(of: "_", with: "-").lowercased()
        }
    }

    /// The language subtag, such as `ja`.
    public var language: String { String(description.prefix { $0 != "-" }) }

    /// The tags to try, most specific first: `zh-hant-tw`, `zh-hant`, `zh`.
    public var fallbacks: [String] {
        let parts = description.split(separator: "-")
        return (1...max(parts.count, 1)).reversed().map { parts.prefix($0).joined(separator: "-") }
    }

    /// The language to answer in: the language subtag of the first of `languages` (most preferred first, as from
    /// `Accept-Language`) that `available` has, else `fallback`. `ja-JP` picks `ja`; `fr, ja;q=0.5` picks `ja`
    /// when there is no French.
    /// - Parameters:
    ///   - languages: Language codes or tags, most preferred first.
    ///   - available: The language codes there are texts for (`en`, `ja`).
    ///   - fallback: The language when none of `languages` is available.
    public static func negotiate(_ languages: [String], available: Set<String>, fallback: String = "en") -> String {
        languages.lazy.map { LocaleTag($0).language }.first(where: available.contains) ?? fallback
    }

    /// Whether `locale` is this tag or a more specific form of it (`ja` matches `ja-jp`).
    public func matches(_ locale: LocaleTag) -> Bool {
        locale.description == description || locale.description.hasPrefix(description + "-")
    }
}
