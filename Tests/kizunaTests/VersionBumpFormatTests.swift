import Foundation
import Testing

@testable import kizuna

/// The file formats and the arithmetic of `kizuna version bump`, without a project.
@Suite("VersionBump formats")
struct VersionBumpFormatTests {
    static func edit(_ text: String, _ format: VersionFileFormat, _ values: [VersionField: String]) -> (sites: [VersionSite], text: String) {
        let bytes = Array(text.utf8)
        let sites = format == .plist ? InfoPlistText.xmlSites(in: bytes, path: "f") : BuildSettingLines.sites(in: bytes, format: format, path: "f")
        let edits = sites.compactMap { site in values[site.field].map { (range: site.range!, text: $0) } }
        return (sites, String(decoding: ByteEdits.apply(edits, to: bytes), as: UTF8.self))
    }

    @Test func windowsLineEndingsConditionsAndCommentsSurviveAnXcconfigEdit() {
        let text =
            "// MARKETING_VERSION = 0.1\r\nMARKETING_VERSION[config=Debug][sdk=iphoneos*] = 3.1 ;\r\n"
            + "CURRENT_PROJECT_VERSION=7//nightly\r\nMARKETING_VERSION_SUFFIX = beta\r\nOTHER = $(MARKETING_VERSION)\r\n"
        let (sites, edited) = Self.edit(text, .xcconfig, [.marketingVersion: "3.2", .buildNumber: "8"])
        #expect(sites.map(\.key) == ["MARKETING_VERSION[config=Debug][sdk=iphoneos*]", "CURRENT_PROJECT_VERSION"])
        #expect(sites.map(\.line) == [2, 3])
        #expect(
            edited
                == "// MARKETING_VERSION = 0.1\r\nMARKETING_VERSION[config=Debug][sdk=iphoneos*] = 3.2 ;\r\n"
                + "CURRENT_PROJECT_VERSION=8//nightly\r\nMARKETING_VERSION_SUFFIX = beta\r\nOTHER = $(MARKETING_VERSION)\r\n")
    }

    @Test func pbxprojValuesPlainQuotedAndInherited() {
        let text = "\t\t\t\tMARKETING_VERSION = 1.0;\r\n\t\t\t\tMARKETING_VERSION = \"1.0\";\n\t\t\t\tCURRENT_PROJECT_VERSION = \"$(inherited)\";\n"
        let (sites, edited) = Self.edit(text, .pbxproj, [.marketingVersion: "1.1"])
        #expect(sites.map(\.value) == ["1.0", "1.0", "$(inherited)"] && sites.map(\.isReference) == [false, false, true])
        #expect(
            edited
                == "\t\t\t\tMARKETING_VERSION = 1.1;\r\n\t\t\t\tMARKETING_VERSION = \"1.1\";\n\t\t\t\tCURRENT_PROJECT_VERSION = \"$(inherited)\";\n")
    }

    @Test func anXMLPlistValueOnTheNextLineKeepsItsLayout() {
        let text =
            "<dict>\n  <key>CFBundleVersion</key>\n\n    <string>9</string>\n  <key>CFBundleShortVersionString</key><string>1.0</string>\n</dict>\n"
        let (sites, edited) = Self.edit(text, .plist, [.marketingVersion: "1.1", .buildNumber: "10"])
        #expect(sites.map(\.line) == [4, 5] && sites.map(\.field) == [.buildNumber, .marketingVersion])
        #expect(
            edited
                == "<dict>\n  <key>CFBundleVersion</key>\n\n    <string>10</string>\n  <key>CFBundleShortVersionString</key><string>1.1</string>\n</dict>\n"
        )
    }

    @Test func foundationReadsAndWritesBinaryPlistsOnThisPlatform() throws {
        let original = try PropertyListSerialization.data(
            fromPropertyList: ["CFBundleVersion": "1", "Nested": ["A": true]] as [String: Any], format: .binary, options: 0)
        #expect(InfoPlistText.isBinary(Array(original)))
        let sites = try InfoPlistText.binarySites(in: original, path: "p")
        #expect(sites.map(\.value) == ["1"] && sites.map(\.field) == [.buildNumber])
        let rewritten = try InfoPlistText.rewriteBinary(original, values: [.buildNumber: "2"], path: "p")
        var format = PropertyListSerialization.PropertyListFormat.xml
        let decoded = try PropertyListSerialization.propertyList(from: rewritten, options: [], format: &format) as? [String: Any]
        #expect(format == .binary)
        #expect(NSDictionary(dictionary: try #require(decoded)).isEqual(to: ["CFBundleVersion": "2", "Nested": ["A": true]]))
        #expect(throws: VersionBumpError.self) { try InfoPlistText.binarySites(in: Data("bplist00 broken".utf8), path: "p") }
    }

    @Test(arguments: [
        ("1.2.3", BumpKind.major, "2.0.0"), ("1.2.3", .minor, "1.3.0"), ("1.2.3", .patch, "1.2.4"), ("1.2.3", .build, "1.2.3"),
        ("1.2", .major, "2.0"), ("1.2", .minor, "1.3"), ("1.2", .patch, "1.2.1"), ("1", .minor, "1.1"),
        ("2.0.0-beta.1", .patch, "2.0.1"), ("1.2.3.4", .minor, "1.3.0.0"),
    ])
    func versionsBump(_ version: String, _ kind: BumpKind, _ expected: String) throws {
        #expect(try VersionArithmetic.bump(version, kind) == expected)
    }

    @Test func buildNumbersIncrementTheirLastComponent() throws {
        #expect(try VersionArithmetic.nextBuild("45") == "46")
        #expect(try VersionArithmetic.nextBuild("1.2.9") == "1.2.10")
        #expect(throws: VersionBumpError.self) { try VersionArithmetic.nextBuild("45a") }
        #expect(throws: VersionBumpError.self) { try VersionArithmetic.bump("v1.0", .patch) }
        #expect(try VersionArithmetic.highest(["1.10.0", "1.9.9"], .marketingVersion) == "1.10.0")
        #expect(try VersionArithmetic.highest(["99", "100"], .buildNumber) == "100")
    }

    @Test func theMenuShowsTheCurrentPairAndFourChoices() throws {
        let current = VersionPair(version: "1.4.2", build: "45")
        let menu = VersionArithmetic.menu(current: current, choices: try VersionArithmetic.choices(from: current, build: "46"))
        #expect(
            menu == """
                Current version: 1.4.2 (45)
                  1) major  2.0.0 (46)
                  2) minor  1.5.0 (46)
                  3) patch  1.4.3 (46)
                  4) build  1.4.2 (46)
                Choose 1-4: 
                """)
    }
}
