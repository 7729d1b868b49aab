import Foundation

/// What `kizuna release inspect` found in an `.ipa`: the app's identity, its profile, the checks and the lint.
public struct IPAInspection: Sendable, Hashable, Codable {
    /// The app bundle inside the archive: `Payload/App.app`.
    public var bundlePath: String
    public var info: BundleInfo
    /// `nil` when the bundle has no `embedded.mobileprovision`.
    public var profile: MobileProvision?
    public var checks: [ReleaseCheck]
    /// The Mach-O files read, by path inside the archive.
    public var binaries: [String]
    public var privateSelectors: [SelectorFinding]

    public init(
        bundlePath: String, info: BundleInfo, profile: MobileProvision?, checks: [ReleaseCheck], binaries: [String],
        privateSelectors: [SelectorFinding]
    ) {
        self.bundlePath = bundlePath
        self.info = info
        self.profile = profile
        self.checks = checks
        self.binaries = binaries
        self.privateSelectors = privateSelectors
    }

    /// The most serious finding among the checks and the lint; `nil` when all passed.
    public var worst: PrivateSelectors.Severity? {
        let levels = checks.compactMap(\.status.severity) + privateSelectors.map(\.severity)
        return levels.max()
    }
}

/// The `Info.plist` fields a release is known by.
public struct BundleInfo: Sendable, Hashable, Codable {
    /// `CFBundleIdentifier`.
    public var bundleId: String?
    /// `CFBundleShortVersionString`: `3.0.0`.
    public var version: String?
    /// `CFBundleVersion`: `4321`.
    public var build: String?
    /// `MinimumOSVersion`.
    public var minimumOSVersion: String?
    /// `CFBundleExecutable`: the main binary's name in the bundle.
    public var executable: String?

    public init(bundleId: String?, version: String?, build: String?, minimumOSVersion: String?, executable: String?) {
        self.bundleId = bundleId
        self.version = version
        self.build = build
        self.minimumOSVersion = minimumOSVersion
        self.executable = executable
    }

    /// Reads an `Info.plist`, XML or binary.
    /// - Throws: `bad_request` when the bytes are not a property-list dictionary.
    public init(propertyList: Data) throws(KizunaError) {
        guard let plist = try? PropertyListSerialization.propertyList(from: propertyList, format: nil) as? [String: Any] else {
            throw KizunaError(.badRequest, "Info.plist is not a property-list dictionary.")
        }
        self.init(
            bundleId: plist["CFBundleIdentifier"] as? String, version: plist["CFBundleShortVersionString"] as? String,
            build: plist["CFBundleVersion"] as? String, minimumOSVersion: plist["MinimumOSVersion"] as? String,
            executable: plist["CFBundleExecutable"] as? String)
    }
}

/// One check's outcome.
public struct ReleaseCheck: Sendable, Hashable, Codable {
    public enum Status: String, Sendable, Hashable, Codable {
        case passed, warning, error
        /// Not run: it needs something this inspection did not have (`--app`, the release registry).
        case skipped

        /// The level `--fail-on` compares; `nil` for passed and skipped.
        public var severity: PrivateSelectors.Severity? {
            switch self {
            case .warning: .warning
            case .error: .error
            case .passed, .skipped: nil
            }
        }
    }

    /// A stable id: `profile.expiry`, `app.bundle-id`, ….
    public var id: String
    public var status: Status
    /// What was found, for a person.
    public var message: String

    public init(_ id: String, _ status: Status, _ message: String) {
        self.id = id
        self.status = status
        self.message = message
    }
}

/// A private-looking selector in one binary.
public struct SelectorFinding: Sendable, Hashable, Codable {
    /// The binary's path inside the archive: `Payload/App.app/App`.
    public var binary: String
    public var selector: String
    public var severity: PrivateSelectors.Severity
    /// The slices it is in (`arm64`, `x86_64`).
    public var architectures: [String]

    public init(binary: String, selector: String, severity: PrivateSelectors.Severity, architectures: [String]) {
        self.binary = binary
        self.selector = selector
        self.severity = severity
        self.architectures = architectures
    }

    /// The private-looking names in a binary's slices, each once with the architectures that carry it, errors first.
    public static func findings(binary: String, slices: [MachO.Slice]) -> [SelectorFinding] {
        var found: [String: SelectorFinding] = [:]
        var order: [String] = []
        for slice in slices {
            for name in slice.methodNames {
                guard let severity = PrivateSelectors.severity(of: name) else { continue }
                if found[name] == nil {
                    order.append(name)
                    found[name] = SelectorFinding(binary: binary, selector: name, severity: severity, architectures: [])
                }
                found[name]?.architectures.append(slice.architecture)
            }
        }
        let findings = order.compactMap { found[$0] }
        return findings.filter { $0.severity == .error } + findings.filter { $0.severity == .warning }
    }
}
