import Foundation

/// The two values `kizuna version bump` reads and writes.
enum VersionField: String, Codable, Sendable, CaseIterable {
    /// The version people see in the store: `MARKETING_VERSION`, `CFBundleShortVersionString`.
    case marketingVersion
    /// The build number: `CURRENT_PROJECT_VERSION`, `CFBundleVersion`.
    case buildNumber

    /// The Xcode build setting that holds it.
    var buildSetting: String { self == .marketingVersion ? "MARKETING_VERSION" : "CURRENT_PROJECT_VERSION" }
    /// The Info.plist key that holds it.
    var plistKey: String { self == .marketingVersion ? "CFBundleShortVersionString" : "CFBundleVersion" }
}

/// The kinds of file a project keeps its version in.
enum VersionFileFormat: String, Codable, Sendable {
    /// `*.xcodeproj/project.pbxproj`: build settings, edited line by line.
    case pbxproj
    /// `*.xcconfig`: build settings, edited line by line.
    case xcconfig
    /// An XML `Info.plist`: the `<string>` after the key is replaced in the text.
    case plist
    /// A binary `Info.plist` (`bplist00`): decoded and encoded again.
    case binaryPlist = "binary-plist"
}

/// One place a version value is written: a file, the key, the value, and where in the file it is.
struct VersionSite: Encodable, Sendable, Hashable {
    /// The file's path relative to the project directory.
    var path: String
    var format: VersionFileFormat
    var field: VersionField
    /// The key as written (`MARKETING_VERSION`, `MARKETING_VERSION[config=Debug]`, `CFBundleVersion`).
    var key: String
    var value: String
    /// The 1-based line, for text files.
    var line: Int?
    /// The byte offsets of the value in the file, for text files; the only bytes a write replaces.
    var range: Range<Int>?

    /// Whether the value refers to a build setting (`$(MARKETING_VERSION)`): such a site is reported, never written.
    var isReference: Bool { value.contains("$(") || value.contains("${") }

    /// `App/Info.plist:22 CFBundleVersion = 45`.
    var location: String { line.map { "\(path):\($0)" } ?? path }

    private enum CodingKeys: String, CodingKey { case path, format, field, key, value, line, reference }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(path, forKey: .path)
        try container.encode(format, forKey: .format)
        try container.encode(field, forKey: .field)
        try container.encode(key, forKey: .key)
        try container.encode(value, forKey: .value)
        try container.encodeIfPresent(line, forKey: .line)
        try container.encode(isReference, forKey: .reference)
    }
}

/// Why a version could not be read or bumped, with a stable code and a message a person can act on.
struct VersionBumpError: Error, CustomStringConvertible, Equatable {
    /// `no_value`, `mismatch`, `bad_value`, `bad_plist`, `git_failed`, `branch_exists`, `no_kind`.
    let code: String
    let message: String

    var description: String { message }
}
