import Foundation

/// One pattern of an `applinks` component (`"/"`, `"?"`, `"#"`), as Apple defines them: `*` matches any run of
/// characters (none included), `?` exactly one, `$(name)` any value of a substitution variable, and every other
/// character itself.
public struct AppLinkPattern: Sendable, Hashable {
    enum Token: Sendable, Hashable {
        case literal(Character)
        case anyRun
        case anyOne
        case variable(String)
    }

    let tokens: [Token]
    /// The text the pattern was written as.
    public let source: String

    /// Parses `source`. An unclosed `$(` is taken literally.
    public init(_ source: String) {
        self.source = source
        var tokens: [Token] = []
        var rest = Substring(source)
        while let first = rest.first {
            if rest.hasPrefix("$("), let close = rest.firstIndex(of: ")") {
                tokens.append(.variable(String(rest[rest.index(rest.startIndex, offsetBy: 2)..<close])))
                rest = rest[rest.index(after: close)...]
                continue
            }
            switch first {
            case "*": if tokens.last != .anyRun { tokens.append(.anyRun) }
            case "?": tokens.append(.anyOne)
            default: tokens.append(.literal(first))
            }
            rest = rest.dropFirst()
        }
        self.tokens = tokens
    }

    /// The variables the pattern uses.
    public var variables: Set<String> {
        Set(tokens.compactMap { if case .variable(let name) = $0 { name } else { nil } })
    }

    /// Whether `text` matches the whole pattern.
    /// - Parameters:
    ///   - caseSensitive: `false` compares letters without regard to case.
    ///   - variables: The values of each substitution variable (built-in and the file's own).
    public func matches(_ text: String, caseSensitive: Bool, variables: [String: [AppLinkPattern]]) -> Bool {
        Self.match(tokens[...], Array(text)[...], caseSensitive: caseSensitive, variables: variables)
    }

    private static func match(
        _ tokens: ArraySlice<Token>, _ text: ArraySlice<Character>, caseSensitive: Bool, variables: [String: [AppLinkPattern]]
    ) -> Bool {
        guard let token = tokens.first else { return text.isEmpty }
        let rest = tokens.dropFirst()
        switch token {
        case .literal(let character):
            guard let first = text.first, same(first, character, caseSensitive: caseSensitive) else { return false }
            return match(rest, text.dropFirst(), caseSensitive: caseSensitive, variables: variables)
        case .anyOne:
            return !text.isEmpty && match(rest, text.dropFirst(), caseSensitive: caseSensitive, variables: variables)
        case .anyRun:
            if rest.isEmpty { return true }
            var suffix = text
            while true {
                if match(rest, suffix, caseSensitive: caseSensitive, variables: variables) { return true }
                guard !suffix.isEmpty else { return false }
                suffix = suffix.dropFirst()
            }
        case .variable(let name):
            // A value is itself a pattern: try every way one of them can cover a prefix of the text.
            for value in variables[name] ?? [] {
                for end in text.indices + [text.endIndex]
                where match(value.tokens[...], text[..<end], caseSensitive: caseSensitive, variables: [:])
                    && match(rest, text[end...], caseSensitive: caseSensitive, variables: variables)
                {
                    return true
                }
            }
            return false
        }
    }

    private static func same(_ a: Character, _ b: Character, caseSensitive: Bool) -> Bool {
        caseSensitive ? a == b : a.lowercased() == b.lowercased()
    }

    /// Apple's built-in substitution variables.
    public static let builtInVariables: [String: [AppLinkPattern]] = {
        func characters(_ text: String) -> [AppLinkPattern] { text.map { AppLinkPattern(String($0)) } }
        let lower = "abcdefghijklmnopqrstuvwxyz"
        let upper = lower.uppercased()
        let digits = "0123456789"
        return [
            "alpha": characters(lower + upper),
            "upper": characters(upper),
            "lower": characters(lower),
            "alnum": characters(lower + upper + digits),
            "digit": characters(digits),
            "xdigit": characters(digits + "abcdefABCDEF"),
            "lang": Locale.LanguageCode.isoLanguageCodes.map(\.identifier).filter { $0.count == 2 }.map(AppLinkPattern.init),
            "region": Locale.Region.isoRegions.map(\.identifier).filter { $0.count == 2 }.map(AppLinkPattern.init),
        ]
    }()
}
