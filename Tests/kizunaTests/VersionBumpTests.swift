import ArgumentParser
import Foundation
import Testing

@testable import kizuna

/// `kizuna version bump` and `show` on the fixture projects of Tests/Fixtures/VersionBump, copied to a temporary
/// directory: the new values where the project keeps them, every other byte as it was.
@Suite("VersionBump commands")
struct VersionBumpTests {
    static let fixtures = CodegenTests.root.appendingPathComponent("Tests/Fixtures/VersionBump")
    static let pbxproj = "App.xcodeproj/project.pbxproj"

    /// A copy of the fixture project `name` in a new temporary directory.
    static func copy(_ name: String) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kizuna-version-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: fixtures.appendingPathComponent(name), to: directory)
        return directory
    }

    /// The legacy fixture plus a binary Info.plist for its extension, as Xcode's older templates left them.
    static func legacyProject() throws -> URL {
        let directory = try copy("Legacy")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("Widget"), withIntermediateDirectories: true)
        let data = try PropertyListSerialization.data(fromPropertyList: widgetPlist(version: "2.4.1", build: "318"), format: .binary, options: 0)
        try data.write(to: directory.appendingPathComponent("Widget/Info.plist"))
        return directory
    }

    static func widgetPlist(version: String, build: String) -> [String: Any] {
        [
            "CFBundleIdentifier": "com.example.Legacy.Widget", "CFBundleShortVersionString": version, "CFBundleVersion": build,
            "NSExtension": ["NSExtensionPointIdentifier": "com.apple.widgetkit-extension"], "UIDeviceFamily": [1, 2],
        ]
    }

    /// Runs `kizuna version bump <arguments>` in-process with no one to ask.
    static func bump(_ arguments: [String], in directory: URL) throws -> VersionBumpResult {
        let command = try #require(try Kizuna.parseAsRoot(["version", "bump", "--project", directory.path] + arguments) as? VersionBumpCommand)
        return try command.perform(ask: { _, _ in nil })
    }

    static func text(_ path: String, in directory: URL) throws -> String {
        try String(contentsOf: directory.appendingPathComponent(path), encoding: .utf8)
    }

    static func fixtureText(_ project: String, _ path: String) throws -> String {
        try text(path, in: fixtures.appendingPathComponent(project))
    }

    static func errorCode(_ body: () throws -> Void) -> String? {
        do {
            try body()
            return nil
        } catch let error as VersionBumpError {
            return error.code
        } catch {
            return "\(error)"
        }
    }

    @Test func aModernProjectIsBumpedInEveryTargetAndConfigurationAndNothingElseChanges() throws {
        let project = try Self.copy("Modern")
        defer { try? FileManager.default.removeItem(at: project) }
        let result = try Self.bump(["minor"], in: project)
        #expect(result.from == VersionPair(version: "1.4.2", build: "45") && result.to == VersionPair(version: "1.5.0", build: "46"))
        // Two targets × Debug and Release × two settings; the quoted values of the extension stay quoted.
        #expect(result.changes.count == 8 && result.changes.allSatisfy { $0.site.path == Self.pbxproj })
        let expected = try Self.fixtureText("Modern", Self.pbxproj)
            .replacingOccurrences(of: "MARKETING_VERSION = 1.4.2;", with: "MARKETING_VERSION = 1.5.0;")
            .replacingOccurrences(of: "MARKETING_VERSION = \"1.4.2\";", with: "MARKETING_VERSION = \"1.5.0\";")
            .replacingOccurrences(of: "CURRENT_PROJECT_VERSION = 45;", with: "CURRENT_PROJECT_VERSION = 46;")
            .replacingOccurrences(of: "CURRENT_PROJECT_VERSION = \"45\";", with: "CURRENT_PROJECT_VERSION = \"46\";")
        #expect(try Self.text(Self.pbxproj, in: project) == expected)
        #expect(try Self.text(Self.pbxproj, in: project).components(separatedBy: "1.5.0").count == 5)
        // The app's plist refers to the build settings: reported, never written.
        #expect(try Self.text("App/Info.plist", in: project) == Self.fixtureText("Modern", "App/Info.plist"))
        #expect(Set(result.references.map(\.value)) == ["$(MARKETING_VERSION)", "$(CURRENT_PROJECT_VERSION)"])
        #expect(try Self.text("ShareExtension/Info.plist", in: project) == Self.fixtureText("Modern", "ShareExtension/Info.plist"))
        #expect(result.text.contains("1.4.2 (45) → 1.5.0 (46)") && result.text.contains("(reference, left as is)"))
    }

    @Test func aLegacyProjectIsBumpedInItsPlistsAndXcconfig() throws {
        let project = try Self.legacyProject()
        defer { try? FileManager.default.removeItem(at: project) }
        let widgetBefore = try Data(contentsOf: project.appendingPathComponent("Widget/Info.plist"))
        let result = try Self.bump(["patch", "--build", "400"], in: project)
        #expect(result.to == VersionPair(version: "2.4.2", build: "400"))
        #expect(Set(result.changes.map(\.site.path)) == ["Config/Version.xcconfig", "Legacy/Info.plist", "Widget/Info.plist"])
        let plist = try Self.fixtureText("Legacy", "Legacy/Info.plist")
            .replacingOccurrences(of: "<string>2.4.1</string>", with: "<string>2.4.2</string>")
            .replacingOccurrences(of: "<string>318</string>", with: "<string>400</string>")
        #expect(try Self.text("Legacy/Info.plist", in: project) == plist)
        let xcconfig = try Self.fixtureText("Legacy", "Config/Version.xcconfig")
            .replacingOccurrences(of: "MARKETING_VERSION = 2.4.1 //", with: "MARKETING_VERSION = 2.4.2 //")
            .replacingOccurrences(of: "CURRENT_PROJECT_VERSION = 318", with: "CURRENT_PROJECT_VERSION = 400")
        #expect(try Self.text("Config/Version.xcconfig", in: project) == xcconfig)
        #expect(xcconfig.contains("// MARKETING_VERSION = 0.9"))
        // A binary plist is encoded again: still binary, and every value but the two is what it was.
        let widget = try Data(contentsOf: project.appendingPathComponent("Widget/Info.plist"))
        #expect(widget.starts(with: Array("bplist00".utf8)) && widget != widgetBefore)
        let decoded = try PropertyListSerialization.propertyList(from: widget, options: [], format: nil) as? [String: Any]
        let expected = Self.widgetPlist(version: "2.4.2", build: "400")
        #expect(NSDictionary(dictionary: try #require(decoded)).isEqual(to: expected))
    }

    @Test func differentValuesAreRefusedByNameUnlessForced() throws {
        let project = try Self.legacyProject()
        defer { try? FileManager.default.removeItem(at: project) }
        let xcconfig = project.appendingPathComponent("Config/Version.xcconfig")
        let original = try String(contentsOf: xcconfig, encoding: .utf8)
        try original.replacingOccurrences(of: "= 2.4.1 ", with: "= 2.5.0 ").write(to: xcconfig, atomically: true, encoding: .utf8)
        let plistBefore = try Self.text("Legacy/Info.plist", in: project)
        #expect(throws: VersionBumpError.self) { try Self.bump(["patch"], in: project) }
        do {
            _ = try Self.bump(["patch"], in: project)
        } catch let error as VersionBumpError {
            #expect(error.code == "mismatch")
            #expect(error.message.contains("Config/Version.xcconfig:4  MARKETING_VERSION = 2.5.0"))
            #expect(error.message.contains("Legacy/Info.plist:10  CFBundleShortVersionString = 2.4.1"))
            #expect(error.message.contains("Widget/Info.plist  CFBundleShortVersionString = 2.4.1"))
        }
        #expect(try Self.text("Legacy/Info.plist", in: project) == plistBefore)
        let forced = try Self.bump(["patch", "--force"], in: project)
        #expect(forced.from.version == "2.5.0" && forced.to.version == "2.5.1")
        #expect(try Self.text("Legacy/Info.plist", in: project).contains("<string>2.5.1</string>"))
        #expect(try Self.text("Config/Version.xcconfig", in: project).contains("MARKETING_VERSION = 2.5.1 //"))
    }

    @Test func aDryRunWritesNothing() throws {
        let project = try Self.legacyProject()
        defer { try? FileManager.default.removeItem(at: project) }
        let paths = ["Legacy/Info.plist", "Config/Version.xcconfig", "Widget/Info.plist"]
        let before = try paths.map { try Data(contentsOf: project.appendingPathComponent($0)) }
        let result = try Self.bump(["major", "--dry-run"], in: project)
        #expect(result.dryRun && result.to == VersionPair(version: "3.0.0", build: "319") && result.changes.count == 6)
        #expect(try paths.map { try Data(contentsOf: project.appendingPathComponent($0)) } == before)
        #expect(
            result.text.contains("(dry run: nothing written)") && result.text.contains("Config/Version.xcconfig:4  MARKETING_VERSION  2.4.1 → 3.0.0"))
        // --branch outside a git repository is refused before anything is written.
        #expect(Self.errorCode { _ = try Self.bump(["major", "--branch"], in: project) } == "git_failed")
        #expect(try paths.map { try Data(contentsOf: project.appendingPathComponent($0)) } == before)
    }

    @Test func theBuildNumberIsTheFlagOrTheCommitCountOrTheNextOne() throws {
        let project = try Self.copy("Modern")
        defer { try? FileManager.default.removeItem(at: project) }
        let same = try Self.bump(["build", "--dry-run"], in: project)
        #expect(same.to == VersionPair(version: "1.4.2", build: "46"))
        #expect(try Self.bump(["build", "--dry-run", "--build", "2024.11.3"], in: project).to.build == "2024.11.3")
        try Self.commitAll(in: project, times: 3)
        #expect(try Self.bump(["build", "--build-from-commits"], in: project).to == VersionPair(version: "1.4.2", build: "3"))
        #expect(try Self.text(Self.pbxproj, in: project).contains("CURRENT_PROJECT_VERSION = \"3\";"))
        #expect(throws: (any Error).self) { try Kizuna.parseAsRoot(["version", "bump", "build", "--build", "4", "--build-from-commits"]) }
        #expect(throws: (any Error).self) { try Kizuna.parseAsRoot(["version", "bump", "build", "--build", "next"]) }
    }

    @Test func branchCreatesTheReleaseBranchAfterWriting() throws {
        let project = try Self.copy("Modern")
        defer { try? FileManager.default.removeItem(at: project) }
        try Self.commitAll(in: project, times: 1)
        let dryRun = try Self.bump(["major", "--branch", "--dry-run"], in: project)
        #expect(dryRun.text.contains("Would create the branch release/2.0.0."))
        #expect(try Git.run(["branch", "--list"], in: project) == "* main")
        let result = try Self.bump(["major", "--branch"], in: project)
        #expect(result.branch == "release/2.0.0")
        #expect(try Git.run(["rev-parse", "--abbrev-ref", "HEAD"], in: project) == "release/2.0.0")
        #expect(try Git.run(["status", "--porcelain"], in: project) == "M \(Self.pbxproj)")
        // The branch of the next version exists: refused before anything is written.
        _ = try Git.run(["branch", "release/2.0.1"], in: project)
        let before = try Self.text(Self.pbxproj, in: project)
        #expect(Self.errorCode { _ = try Self.bump(["patch", "--branch"], in: project) } == "branch_exists")
        #expect(try Self.text(Self.pbxproj, in: project) == before)
    }

    @Test func withoutAKindOrATerminalTheChoicesAreNamed() throws {
        let project = try Self.copy("Modern")
        defer { try? FileManager.default.removeItem(at: project) }
        #expect(Self.errorCode { _ = try Self.bump([], in: project) } == "no_kind")
        let asked = try #require(try Kizuna.parseAsRoot(["version", "bump", "--project", project.path]) as? VersionBumpCommand)
        let result = try asked.perform { current, choices in
            #expect(current == VersionPair(version: "1.4.2", build: "45"))
            #expect(choices.map(\.pair.description) == ["2.0.0 (46)", "1.5.0 (46)", "1.4.3 (46)", "1.4.2 (46)"])
            return .patch
        }
        #expect(result.to == VersionPair(version: "1.4.3", build: "46"))
    }

    @Test func showReportsEveryPlace() throws {
        let project = try Self.legacyProject()
        defer { try? FileManager.default.removeItem(at: project) }
        let command = try #require(try Kizuna.parseAsRoot(["version", "show", "--project", project.path]) as? VersionShowCommand)
        let report = try command.report()
        #expect(report.version == "2.4.1" && report.build == "318")
        #expect(
            report.sites.map(\.location) == [
                "Config/Version.xcconfig:4", "Config/Version.xcconfig:5", "Legacy/Info.plist:10", "Legacy/Info.plist:12",
                "Widget/Info.plist", "Widget/Info.plist",
            ])
        #expect(report.sites.map(\.format) == [.xcconfig, .xcconfig, .plist, .plist, .binaryPlist, .binaryPlist])
        // `kizuna version` alone still prints Kizuna's own version.
        #expect(try Kizuna.parseAsRoot(["version", "--json"]) is VersionCommand)
        #expect(try #require(try Kizuna.parseAsRoot(["version", "bump", "minor", "--json"]) as? VersionBumpCommand).output.json)
    }

    /// Makes `directory` a git repository with `times` commits, the first holding every file.
    static func commitAll(in directory: URL, times: Int) throws {
        _ = try Git.run(["init", "-q", "-b", "main"], in: directory)
        for index in 0..<times {
            try Data("\(index)\n".utf8).write(to: directory.appendingPathComponent("NOTES"))
            _ = try Git.run(["add", "-A"], in: directory)
            _ = try Git.run(
                ["-c", "user.name=Test", "-c", "user.email=test@example.com", "-c", "commit.gpgsign=false", "commit", "-qm", "Change \(index)"],
                in: directory
            )
        }
    }
}
