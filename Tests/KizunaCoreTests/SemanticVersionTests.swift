import Foundation
import KizunaCore
import Testing

@Suite("Versions")
struct SemanticVersionTests {
    /// `lhs` compared with `rhs`: -1, 0 or 1.
    struct Ordering: CustomTestStringConvertible, Sendable {
        let lhs: String
        let rhs: String
        let expected: Int
        let note: String
        var testDescription: String { "\(lhs) vs \(rhs): \(note)" }
    }

    static let orderings: [Ordering] = [
        // FIELD-NOTES §1: lexical comparison calls 3.10.0 older than 3.9.0.
        .init(lhs: "3.10.0", rhs: "3.9.0", expected: 1, note: "numeric, not lexical"),
        .init(lhs: "3.9.0", rhs: "3.10.0", expected: -1, note: "numeric, not lexical"),
        .init(lhs: "10.0", rhs: "9.9.9", expected: 1, note: "numeric major"),
        .init(lhs: "1.10", rhs: "1.9", expected: 1, note: "numeric minor"),
        .init(lhs: "1.0.10", rhs: "1.0.9", expected: 1, note: "numeric patch"),
        // FIELD-NOTES §1: zipping components calls 1.0 and 1.0.1 equal.
        .init(lhs: "1.0", rhs: "1.0.1", expected: -1, note: "missing components are zero, not ignored"),
        .init(lhs: "1.0.1", rhs: "1.0", expected: 1, note: "missing components are zero, not ignored"),
        .init(lhs: "1", rhs: "1.0.0", expected: 0, note: "missing components are zero"),
        .init(lhs: "1.0", rhs: "1.0.0", expected: 0, note: "missing components are zero"),
        .init(lhs: "2", rhs: "1.99.99", expected: 1, note: "one component"),
        .init(lhs: "1.2.3.4", rhs: "1.2.3", expected: 1, note: "four components"),
        .init(lhs: "1.2.3.0", rhs: "1.2.3", expected: 0, note: "trailing zero"),
        .init(lhs: "0.9", rhs: "1", expected: -1, note: "zero major"),
        .init(lhs: "1.01", rhs: "1.1", expected: 0, note: "leading zeros read as integers, as Apple does"),
        // SemVer 2.0 pre-release ordering (§11).
        .init(lhs: "2.0.0-beta", rhs: "2.0.0", expected: -1, note: "pre-release below its release"),
        .init(lhs: "2.0.0-beta.2", rhs: "2.0.0-beta.11", expected: -1, note: "numeric pre-release identifiers"),
        .init(lhs: "1.0.0-alpha", rhs: "1.0.0-alpha.1", expected: -1, note: "fewer identifiers first"),
        .init(lhs: "1.0.0-alpha.1", rhs: "1.0.0-alpha.beta", expected: -1, note: "numeric below alphanumeric"),
        .init(lhs: "1.0.0-alpha.beta", rhs: "1.0.0-beta", expected: -1, note: "alphanumeric ASCII order"),
        .init(lhs: "1.0.0-beta", rhs: "1.0.0-beta.2", expected: -1, note: "SemVer example"),
        .init(lhs: "1.0.0-beta.2", rhs: "1.0.0-beta.11", expected: -1, note: "SemVer example"),
        .init(lhs: "1.0.0-beta.11", rhs: "1.0.0-rc.1", expected: -1, note: "SemVer example"),
        .init(lhs: "1.0.0-rc.1", rhs: "1.0.0", expected: -1, note: "SemVer example"),
        .init(lhs: "2.0.0-beta", rhs: "1.9.9", expected: 1, note: "pre-release above lower releases"),
        .init(lhs: "2.0-rc.1", rhs: "2.0.0-rc.1", expected: 0, note: "short release with pre-release"),
        .init(lhs: "1.0.0-Beta", rhs: "1.0.0-beta", expected: -1, note: "pre-release compares ASCII, upper case first"),
        // Build metadata is ignored for ordering.
        .init(lhs: "1.2.3+45", rhs: "1.2.3", expected: 0, note: "build metadata ignored"),
        .init(lhs: "1.2.3+45", rhs: "1.2.3+46", expected: 0, note: "build metadata ignored"),
        .init(lhs: "1.2.3-rc.1+7", rhs: "1.2.3-rc.1", expected: 0, note: "build metadata after pre-release ignored"),
        .init(lhs: "1.2.4+1", rhs: "1.2.3+99", expected: 1, note: "release wins over metadata"),
    ]

    @Test(arguments: orderings)
    func orders(_ vector: Ordering) throws {
        let lhs = try SemanticVersion(parsing: vector.lhs)
        let rhs = try SemanticVersion(parsing: vector.rhs)
        let actual = lhs < rhs ? -1 : (rhs < lhs ? 1 : 0)
        #expect(actual == vector.expected)
        #expect((lhs == rhs) == (vector.expected == 0))
        if vector.expected == 0 { #expect(lhs.hashValue == rhs.hashValue) }
    }

    /// Text that is not a version, and a fragment the error must contain.
    static let rejections: [(String, String)] = [
        ("", "empty"),
        ("v2", "component 1 \"v2\" is not a number"),
        ("V2.0", "component 1 \"V2\" is not a number"),
        ("2.0.0-beta.01", "leading zero"),
        ("1..2", "component 2 is empty"),
        ("1.", "component 2 is empty"),
        (".1", "component 1 is empty"),
        ("1.2.3.4.5", "5 components"),
        ("1.2.x", "component 3 \"x\" is not a number"),
        (" 1.2", "component 1 \" 1\" is not a number"),
        ("1.2 ", "component 2 \"2 \" is not a number"),
        ("1.0-", "pre-release identifier 1 is empty"),
        ("1.0-beta..1", "pre-release identifier 2 is empty"),
        ("1.0+", "build metadata identifier 1 is empty"),
        ("1.0-beta_1", "may hold only letters, digits and '-'"),
        ("99999999999999999999", "too large"),
        ("1.2-beta+", "build metadata identifier 1 is empty"),
        ("１.２", "is not a number"),
    ]

    @Test(arguments: rejections)
    func rejects(_ text: String, _ fragment: String) {
        #expect {
            try SemanticVersion(parsing: text)
        } throws: { error in
            let description = String(describing: error)
            return description.contains(fragment) && description.contains("\"\(text)\"")
        }
    }

    @Test func keepsWhatWasWritten() throws {
        let version = try SemanticVersion(parsing: "2.0.0-beta.2+45")
        #expect(version.description == "2.0.0-beta.2+45")
        #expect(version.components == [2, 0, 0])
        #expect(version.preRelease == [.alphanumeric("beta"), .numeric(2)])
        #expect(version.buildMetadata == ["45"])
        #expect(version.isPreRelease)
        #expect((version.major, version.minor, version.patch) == (2, 0, 0))
    }

    static let builds: [(String, String, Int)] = [
        ("9", "10", -1),
        ("100", "99", 1),
        ("1.0", "1", 0),
        ("2024.11.3", "2024.11.10", -1),
        ("45", "45.0.0", 0),
        ("1.2.3", "1.2", 1),
    ]

    @Test(arguments: builds)
    func ordersBuildNumbers(_ lhs: String, _ rhs: String, _ expected: Int) throws {
        let a = try BuildNumber(parsing: lhs)
        let b = try BuildNumber(parsing: rhs)
        #expect((a < b ? -1 : (b < a ? 1 : 0)) == expected)
    }

    @Test(arguments: ["", "1.0-beta", "v12", "1..2", "12a", "1.2.3.4.5"])
    func rejectsBadBuildNumbers(_ text: String) {
        #expect(throws: VersionFormatError.self) { try BuildNumber(parsing: text) }
    }

    @Test func decodesFromJSONAndNamesTheBadValue() throws {
        let decoded = try WireFormat.decoder().decode([SemanticVersion].self, from: Data(#"["3.10.0","1.0"]"#.utf8))
        #expect(decoded[0] > decoded[1])
        #expect {
            try WireFormat.decoder().decode([SemanticVersion].self, from: Data(#"["v2"]"#.utf8))
        } throws: { error in
            String(describing: error).contains("\"v2\" is not a valid version")
        }
    }
}
