/// A build number (`CFBundleVersion`): one to four integers separated by dots, such as `45` or `2024.11.3`.
///
/// Build numbers compare numerically component by component with missing components as zero, so
/// `9 < 10` and `1.0 == 1`.
public struct BuildNumber: Sendable, Hashable, Comparable, CustomStringConvertible, VersionText {
    /// The components as written.
    public let components: [Int]
    /// The text this build number was parsed from.
    public let description: String

    /// Parses `text`.
    ///
    /// - Throws: ``VersionFormatError`` naming the bad part.
    public init(parsing text: String) throws(VersionFormatError) {
        guard !text.isEmpty else { throw VersionFormatError(input: text, reason: "it is empty") }
        components = try DottedNumbers.parse(Substring(text), kind: "a build number", input: text)
        description = text
    }

    private var significantComponents: ArraySlice<Int> { DottedNumbers.significant(components) }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.significantComponents == rhs.significantComponents }
    public func hash(into hasher: inout Hasher) { hasher.combine(Array(significantComponents)) }
    public static func < (lhs: Self, rhs: Self) -> Bool { DottedNumbers.compare(lhs.components, rhs.components) < 0 }
}
