/// An app or OS version as iOS apps ship it: `3.10.0`, `1.0`, `2`, `2.0.0-beta.2`, `1.2.3+45`.
///
/// Release components compare numerically, one by one, with missing components as zero, so
/// `1.0 == 1.0.0 < 1.0.1` and `3.9.0 < 3.10.0`. A pre-release sorts below its release and pre-release
/// identifiers compare as SemVer 2.0 says. Build metadata (after `+`) is kept for display and ignored for
/// ordering and equality. Anything else — a `v` prefix, an empty or non-numeric component, white space —
/// is rejected with a ``VersionFormatError`` that names the bad part; nothing silently becomes zero.
public struct SemanticVersion: Sendable, Hashable, Comparable, CustomStringConvertible, VersionText {
    /// One dot-separated part of a pre-release, such as `beta` or `2` in `2.0.0-beta.2`.
    public enum PreReleaseIdentifier: Sendable, Hashable, Comparable {
        case numeric(Int)
        case alphanumeric(String)

        /// Numeric identifiers sort below alphanumeric ones; each kind compares naturally (SemVer 2.0 §11).
        public static func < (lhs: Self, rhs: Self) -> Bool {
            switch (lhs, rhs) {
            case (.numeric(let a), .numeric(let b)): a < b
            case (.alphanumeric(let a), .alphanumeric(let b)): a.utf8.lexicographicallyPrecedes(b.utf8)
            case (.numeric, .alphanumeric): true
            case (.alphanumeric, .numeric): false
            }
        }
    }

    /// The most release components accepted (`1.2.3.4`).
    public static let maximumComponents = 4

    /// The numeric release components as written, such as `[3, 10, 0]`.
    public let components: [Int]
    /// The pre-release identifiers; empty for a release.
    public let preRelease: [PreReleaseIdentifier]
    /// The build metadata identifiers; ignored for ordering.
    public let buildMetadata: [String]
    /// The text this version was parsed from.
    public let description: String

    /// Parses `text`.
    ///
    /// - Throws: ``VersionFormatError`` naming the first part that is not a version.
    public init(parsing text: String) throws(VersionFormatError) {
        func fail(_ reason: String) -> VersionFormatError { VersionFormatError(input: text, reason: reason) }
        guard !text.isEmpty else { throw fail("it is empty") }
        var rest = Substring(text)
        var build: [String] = []
        if let plus = rest.firstIndex(of: "+") {
            build = try Self.identifiers(rest[rest.index(after: plus)...], kind: "build metadata", in: text)
            rest = rest[..<plus]
        }
        var pre: [PreReleaseIdentifier] = []
        if let dash = rest.firstIndex(of: "-") {
            for identifier in try Self.identifiers(rest[rest.index(after: dash)...], kind: "pre-release", in: text) {
                guard identifier.allSatisfy(\.isASCIIDigit) else {
                    pre.append(.alphanumeric(identifier))
                    continue
                }
                guard identifier == "0" || !identifier.hasPrefix("0") else {
                    throw fail("pre-release identifier \"\(identifier)\" has a leading zero")
                }
                guard let number = Int(identifier) else { throw fail("pre-release identifier \"\(identifier)\" is too large") }
                pre.append(.numeric(number))
            }
            rest = rest[..<dash]
        }
        components = try DottedNumbers.parse(rest, kind: "a version", input: text)
        preRelease = pre
        buildMetadata = build
        description = text
    }

    private static func identifiers(_ text: Substring, kind: String, in input: String) throws(VersionFormatError) -> [String] {
        var result: [String] = []
        for (index, identifier) in text.split(separator: ".", omittingEmptySubsequences: false).enumerated() {
            guard !identifier.isEmpty else {
                throw VersionFormatError(input: input, reason: "\(kind) identifier \(index + 1) is empty")
            }
            guard identifier.allSatisfy({ $0.isASCIIDigit || $0.isASCIILetter || $0 == "-" }) else {
                throw VersionFormatError(input: input, reason: "\(kind) identifier \"\(identifier)\" may hold only letters, digits and '-'")
            }
            result.append(String(identifier))
        }
        return result
    }

    /// The release components without trailing zeros: the form equality and hashing use.
    private var significantComponents: ArraySlice<Int> { DottedNumbers.significant(components) }

    /// The first release component (`3` in `3.10.0`).
    public var major: Int { components.first ?? 0 }
    /// The second release component, zero when missing.
    public var minor: Int { components.count > 1 ? components[1] : 0 }
    /// The third release component, zero when missing.
    public var patch: Int { components.count > 2 ? components[2] : 0 }
    /// Whether this is a pre-release such as `2.0.0-beta.2`.
    public var isPreRelease: Bool { !preRelease.isEmpty }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.significantComponents == rhs.significantComponents && lhs.preRelease == rhs.preRelease
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(Array(significantComponents))
        hasher.combine(preRelease)
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        let order = DottedNumbers.compare(lhs.components, rhs.components)
        if order != 0 { return order < 0 }
        switch (lhs.preRelease.isEmpty, rhs.preRelease.isEmpty) {
        case (true, _): return false
        case (false, true): return true
        case (false, false): return lhs.preRelease.lexicographicallyPrecedes(rhs.preRelease)
        }
    }
}

/// A value written as text on the wire, such as a version: it encodes as its text and decodes by parsing,
/// so a bad value fails decoding with the parser's message.
public protocol VersionText: Codable, CustomStringConvertible {
    /// Parses `text`.
    init(parsing text: String) throws(VersionFormatError)
}

extension VersionText {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do {
            try self.init(parsing: text)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.description)
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}

/// A text that is not a version, and why.
public struct VersionFormatError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The text that failed to parse.
    public let input: String
    /// What is wrong with it, in words.
    public let reason: String

    public var description: String { "\"\(input)\" is not a valid version: \(reason)" }
}

/// Dotted integers (`3.10.0`): parsing, and numeric comparison with missing components as zero.
enum DottedNumbers {
    /// Parses one to ``SemanticVersion/maximumComponents`` integers separated by dots.
    static func parse(_ text: Substring, kind: String, input: String) throws(VersionFormatError) -> [Int] {
        // Nearly every version a device sends is digits and dots: those bytes are read directly, and only anything else
        // is split up to say what is wrong with it.
        if let numbers = plain(text.utf8) { return numbers }
        func fail(_ reason: String) -> VersionFormatError { VersionFormatError(input: input, reason: reason) }
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= SemanticVersion.maximumComponents else {
            throw fail("it has \(parts.count) components; at most \(SemanticVersion.maximumComponents) are allowed")
        }
        var numbers: [Int] = []
        for (index, part) in parts.enumerated() {
            guard !part.isEmpty else { throw fail("component \(index + 1) is empty") }
            guard part.allSatisfy(\.isASCIIDigit) else {
                throw fail("component \(index + 1) \"\(part)\" is not a number; \(kind) is digits separated by dots")
            }
            guard let number = Int(part) else { throw fail("component \(index + 1) \"\(part)\" is too large") }
            numbers.append(number)
        }
        return numbers
    }

    /// The numbers of a text that is only digits and dots, each dot between two numbers, read byte by byte; `nil` for
    /// anything else.
    private static func plain(_ text: Substring.UTF8View) -> [Int]? {
        var numbers: [Int] = []
        numbers.reserveCapacity(4)
        var current = 0
        var digits = 0
        for byte in text {
            if byte == UInt8(ascii: ".") {
                guard digits > 0 else { return nil }
                numbers.append(current)
                (current, digits) = (0, 0)
            } else if byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                let (times, overflow) = current.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
                guard !overflow, !overflow2 else { return nil }
                (current, digits) = (sum, digits + 1)
            } else {
                return nil
            }
        }
        guard digits > 0 else { return nil }
        numbers.append(current)
        return numbers.count <= SemanticVersion.maximumComponents ? numbers : nil
    }

    /// The components without trailing zeros: the form equality and hashing use.
    static func significant(_ components: [Int]) -> ArraySlice<Int> {
        var end = components.count
        while end > 0, components[end - 1] == 0 { end -= 1 }
        return components[..<end]
    }

    /// Returns a negative number, zero or a positive number as `lhs` is below, equal to or above `rhs`.
    static func compare(_ lhs: [Int], _ rhs: [Int]) -> Int {
        for index in 0..<max(lhs.count, rhs.count) {
            let a = index < lhs.count ? lhs[index] : 0
            let b = index < rhs.count ? rhs[index] : 0
            if a != b { return a < b ? -1 : 1 }
        }
        return 0
    }
}

extension Character {
    var isASCIIDigit: Bool { isASCII && isNumber }
    var isASCIILetter: Bool { isASCII && isLetter }
}
