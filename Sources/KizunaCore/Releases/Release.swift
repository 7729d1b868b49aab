import Foundation

/// Where a build goes.
public enum ReleaseChannel: String, Sendable, Hashable, Codable, CaseIterable {
    case appstore, testflight, adhoc, `internal`
}

/// A release to record: `POST /v1/admin/apps/{app}/releases`.
public struct NewRelease: Sendable, Hashable, Codable {
    /// The marketing version (`CFBundleShortVersionString`), such as `3.10.1`.
    public var version: String
    /// The build number (`CFBundleVersion`), such as `4321`.
    public var build: String
    public var channel: ReleaseChannel
    public var notes: String?
    public var commit: String?
    public var branch: String?
    /// The release's tag; by default ``ReleaseTag/defaultTemplate`` filled in.
    public var tag: String?

    public init(
        version: String, build: String, channel: ReleaseChannel, notes: String? = nil, commit: String? = nil, branch: String? = nil,
        tag: String? = nil
    ) {
        self.version = version
        self.build = build
        self.channel = channel
        self.notes = notes
        self.commit = commit
        self.branch = branch
        self.tag = tag
    }

    /// Checks the version, the build number and the free-text fields' lengths.
    /// - Throws: `validation_failed` listing every problem with its field.
    public func validate() throws(KizunaError) {
        var reader = DocumentReader()
        _ = reader.parse(.string(version), at: JSONPath.root["version"], SemanticVersion.init(parsing:))
        _ = reader.parse(.string(build), at: JSONPath.root["build"], BuildNumber.init(parsing:))
        for (field, value, limit) in [("notes", notes, 20_000), ("commit", commit, 100), ("branch", branch, 255), ("tag", tag, 255)] {
            if let value, value.count > limit { reader.problem(JSONPath.root[field], "is longer than \(limit) characters") }
        }
        try reader.throwIfFailed("The release")
    }
}

/// A file attached to a release: an archive, a dSYM zip, an ipa, anything.
public struct ReleaseArtifact: Sendable, Hashable, Codable {
    public var name: String
    public var size: Int64
    /// Hex SHA-256 of the bytes, computed while they streamed in.
    public var sha256: String
    /// Hex MD5 (the store's transporter wants it).
    public var md5: String
    public var contentType: String
    public var uploadedAt: Date

    public init(name: String, size: Int64, sha256: String, md5: String, contentType: String, uploadedAt: Date) {
        self.name = name
        self.size = size
        self.sha256 = sha256
        self.md5 = md5
        self.contentType = contentType
        self.uploadedAt = uploadedAt
    }

    /// Whether `name` may name an artifact: 1–200 characters of letters, digits, `.`, `_`, `-` and `+`, not
    /// starting with a dot.
    public static func isValidName(_ name: String) -> Bool {
        (1...200).contains(name.count) && !name.hasPrefix(".")
            && name.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._-+".unicodeScalars.contains($0)) }
    }
}

/// A recorded release.
public struct ReleaseRecord: Sendable, Hashable, Codable {
    public var id: String
    public var app: String
    public var version: String
    public var build: String
    public var channel: ReleaseChannel
    public var notes: String?
    public var commit: String?
    public var branch: String?
    public var tag: String
    public var createdBy: String
    public var createdAt: Date
    public var artifacts: [ReleaseArtifact]
    /// Whether the live gate policy blocks this version (`kizuna release block`).
    public var blocked: Bool

    public init(
        id: String, app: String, version: String, build: String, channel: ReleaseChannel, notes: String?, commit: String?, branch: String?,
        tag: String, createdBy: String, createdAt: Date, artifacts: [ReleaseArtifact], blocked: Bool
    ) {
        self.id = id
        self.app = app
        self.version = version
        self.build = build
        self.channel = channel
        self.notes = notes
        self.commit = commit
        self.branch = branch
        self.tag = tag
        self.createdBy = createdBy
        self.createdAt = createdAt
        self.artifacts = artifacts
        self.blocked = blocked
    }
}

/// A page of releases, newest first.
public struct ReleaseList: Sendable, Hashable, Codable {
    public var releases: [ReleaseRecord]
    public init(releases: [ReleaseRecord]) { self.releases = releases }
}

extension SemanticVersion {
    /// The form a release's version is compared in: components to three, so `3.10` and `3.10.0` are one version, as
    /// the store treats them; a pre-release kept.
    public var releaseKey: String {
        var key = (components + [0, 0, 0]).prefix(max(3, components.count)).map(String.init).joined(separator: ".")
        if !preRelease.isEmpty, let tail = description.split(separator: "-", maxSplits: 1).last { key += "-" + tail }
        return key
    }
}

/// A release's tag from a template: `{version}`, `{build}`, `{channel}` and `{utc}` (the creation time as
/// `yyyyMMdd-HHmmss`, UTC) are filled in; anything else stays as written.
public enum ReleaseTag {
    /// `v{version}-{build}`: `v3.10.1-4321`.
    public static let defaultTemplate = "v{version}-{build}"

    public static func render(_ template: String, version: String, build: String, channel: ReleaseChannel, at date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let utc = String(
            format: "%04d%02d%02d-%02d%02d%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0, parts.hour ?? 0, parts.minute ?? 0,
            parts.second ?? 0)
        return template.replacingOccurrences(of: "{version}", with: version).replacingOccurrences(of: "{build}", with: build)
            .replacingOccurrences(of: "{channel}", with: channel.rawValue).replacingOccurrences(of: "{utc}", with: utc)
    }
}
