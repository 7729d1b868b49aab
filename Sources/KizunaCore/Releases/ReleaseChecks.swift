import Foundation

/// The checks `kizuna release inspect` runs on an archive: its own (Info.plist, profile) and, given the app's record
/// in Kizuna, the registry's. Pure: the command fetches what they compare against.
public enum ReleaseChecks {
    /// What Kizuna holds for the app the archive is meant to be.
    public struct Registry: Sendable, Hashable {
        public var app: AppRecord
        /// The host Kizuna serves apple-app-site-association on (`login.example.com`).
        public var domain: String
        public var associatedDomains: AssociatedDomainSettings
        /// `nil` when the app has no APNs credentials in Kizuna.
        public var push: PushCredentialsInfo?
        /// The builds released per version (by ``SemanticVersion/releaseKey``), from the release registry.
        public var released: [String: Set<String>]

        public init(
            app: AppRecord, domain: String, associatedDomains: AssociatedDomainSettings, push: PushCredentialsInfo?,
            released: [String: Set<String>] = [:]
        ) {
            self.app = app
            self.domain = domain
            self.associatedDomains = associatedDomains
            self.push = push
            self.released = released
        }

        /// The associated-domain entitlements the app needs for what Kizuna serves it: `webcredentials:` when it shares
        /// passwords, `applinks:` when it has universal-link rules.
        public var expectedDomains: [String] {
            var domains: [String] = []
            if associatedDomains.webCredentials { domains.append("webcredentials:\(domain)") }
            if !associatedDomains.appLinks.isEmpty || associatedDomains.legacyPaths { domains.append("applinks:\(domain)") }
            return domains
        }
    }

    /// A profile expiring within this many days is a warning: the build still installs, but not for long.
    public static let expiryWarningDays = 30

    /// The archive's own checks: the Info.plist identity, the profile's presence, expiry, kind and app identifier.
    public static func archive(info: BundleInfo, profile: MobileProvision?, now: Date) -> [ReleaseCheck] {
        var checks: [ReleaseCheck] = []
        let missing = [
            ("CFBundleIdentifier", info.bundleId), ("CFBundleShortVersionString", info.version), ("CFBundleVersion", info.build),
            ("CFBundleExecutable", info.executable),
        ].filter { $0.1 == nil }.map(\.0)
        checks.append(
            missing.isEmpty
                ? ReleaseCheck("info.keys", .passed, "Info.plist has the bundle id, version, build and executable")
                : ReleaseCheck("info.keys", .error, "Info.plist lacks \(missing.joined(separator: ", "))"))
        guard let profile else {
            checks.append(ReleaseCheck("profile.present", .error, "the bundle has no embedded.mobileprovision: it is not signed for a device"))
            return checks
        }
        if let expiry = profile.expirationDate {
            let days = Int(expiry.timeIntervalSince(now) / 86_400)
            if expiry <= now {
                checks.append(ReleaseCheck("profile.expiry", .error, "the profile expired on \(day(expiry))"))
            } else if days < expiryWarningDays {
                checks.append(ReleaseCheck("profile.expiry", .warning, "the profile expires on \(day(expiry)), in \(days) days"))
            } else {
                checks.append(ReleaseCheck("profile.expiry", .passed, "the profile is valid until \(day(expiry))"))
            }
        } else {
            checks.append(ReleaseCheck("profile.expiry", .error, "the profile has no ExpirationDate"))
        }
        switch profile.kind {
        case .appStore, .enterprise:
            checks.append(ReleaseCheck("profile.kind", .passed, "an \(profile.kind.rawValue) profile"))
        case .development, .adHoc:
            checks.append(ReleaseCheck("profile.kind", .warning, "a \(profile.kind.rawValue) profile: the store refuses this build"))
        }
        if let identifier = profile.applicationIdentifier {
            let matches = profile.teamIdentifiers.contains { team in info.bundleId.map { covers(identifier, "\(team).\($0)") } ?? false }
            checks.append(
                matches
                    ? ReleaseCheck("profile.app-id", .passed, "the profile's \(identifier) covers \(info.bundleId ?? "")")
                    : ReleaseCheck("profile.app-id", .error, "the profile's \(identifier) does not cover the bundle id \(info.bundleId ?? "(none)")"))
        } else {
            checks.append(ReleaseCheck("profile.app-id", .error, "the profile's entitlements have no application-identifier"))
        }
        return checks
    }

    /// The checks against the app's record in Kizuna: bundle id, team id, associated domains, push environment.
    public static func registry(info: BundleInfo, profile: MobileProvision?, _ registry: Registry) -> [ReleaseCheck] {
        let app = registry.app
        var checks: [ReleaseCheck] = []
        checks.append(
            info.bundleId == app.bundleId
                ? ReleaseCheck("app.bundle-id", .passed, "bundle id \(app.bundleId) is app \(app.id)'s")
                : ReleaseCheck("app.bundle-id", .error, "bundle id \(info.bundleId ?? "(none)") is not app \(app.id)'s \(app.bundleId)"))
        let teams = profile?.teamIdentifiers ?? []
        if let team = app.teamId {
            checks.append(
                teams.contains(team)
                    ? ReleaseCheck("app.team-id", .passed, "team \(team) is app \(app.id)'s")
                    : ReleaseCheck(
                        "app.team-id", .error,
                        "the profile's team \(teams.joined(separator: ", ").nonEmpty ?? "(none)") is not app \(app.id)'s \(team)"))
        } else {
            checks.append(ReleaseCheck("app.team-id", .warning, "app \(app.id) has no team id in Kizuna: set one with `kizuna app` to check it"))
        }
        checks.append(domainCheck(profile: profile, registry))
        checks.append(pushCheck(profile: profile, registry))
        return checks
    }

    /// The hook for the release registry's check that (version, build) is not already released. It is not wired yet:
    /// TODO(issue 17): compare with the app's releases once the release registry exists.
    public static func unreleased(info: BundleInfo, released: [String: Set<String>]? = nil) -> ReleaseCheck {
        let pair = "\(info.version ?? "?") (\(info.build ?? "?"))"
        guard let released, let version = info.version, let build = info.build else {
            return ReleaseCheck("release.unreleased", .skipped, "not checked: give --app to compare \(pair) with the app's releases")
        }
        let key = (try? SemanticVersion(parsing: version))?.releaseKey ?? version
        return released[key]?.contains(build) == true
            ? ReleaseCheck("release.unreleased", .error, "\(pair) is already released: the store refuses a (version, build) pair twice")
            : ReleaseCheck("release.unreleased", .passed, "\(pair) is not released yet")
    }

    private static func domainCheck(profile: MobileProvision?, _ registry: Registry) -> ReleaseCheck {
        let expected = registry.expectedDomains
        let granted = profile?.associatedDomains ?? []
        if expected.isEmpty { return ReleaseCheck("app.associated-domains", .passed, "Kizuna serves no associated domains for the app") }
        if granted == ["*"] {
            return ReleaseCheck(
                "app.associated-domains", .passed,
                "the profile allows any associated domain; the app needs \(expected.joined(separator: ", ")) in its entitlements")
        }
        // `applinks:host?mode=developer` (or `managed`) is the same domain in another mode.
        let hosts = Set(granted.map { $0.split(separator: "?", maxSplits: 1).first.map(String.init) ?? $0 })
        let missing = expected.filter { !hosts.contains($0) }
        return missing.isEmpty
            ? ReleaseCheck("app.associated-domains", .passed, "the profile has \(expected.joined(separator: ", "))")
            : ReleaseCheck("app.associated-domains", .error, "the profile lacks \(missing.joined(separator: ", ")), which Kizuna serves for the app")
    }

    private static func pushCheck(profile: MobileProvision?, _ registry: Registry) -> ReleaseCheck {
        let entitlement = profile?.apsEnvironment
        guard let push = registry.push else {
            return entitlement == nil
                ? ReleaseCheck("app.push-environment", .passed, "no push: neither aps-environment nor APNs credentials in Kizuna")
                : ReleaseCheck("app.push-environment", .warning, "aps-environment is \(entitlement!) but the app has no APNs credentials in Kizuna")
        }
        guard let entitlement else {
            return ReleaseCheck("app.push-environment", .error, "the app has APNs credentials in Kizuna but the profile has no aps-environment")
        }
        let environment: APNsEnvironment? = entitlement == "production" ? .production : entitlement == "development" ? .sandbox : nil
        guard let environment else {
            return ReleaseCheck("app.push-environment", .error, "aps-environment '\(entitlement)' is neither development nor production")
        }
        guard let sends = push.environment else {
            return ReleaseCheck("app.push-environment", .passed, "aps-environment \(entitlement); Kizuna sends to each device's own environment")
        }
        return sends == environment
            ? ReleaseCheck("app.push-environment", .passed, "aps-environment \(entitlement) is Kizuna's \(sends.rawValue)")
            : ReleaseCheck("app.push-environment", .error, "aps-environment \(entitlement) but Kizuna sends to \(sends.rawValue) only")
    }

    /// Whether an application identifier (`TEAM.com.example.*`, `TEAM.*`) covers `TEAM.bundle`.
    static func covers(_ pattern: String, _ appID: String) -> Bool {
        pattern.hasSuffix("*") ? appID.hasPrefix(pattern.dropLast()) : pattern == appID
    }

    private static func day(_ date: Date) -> String { String(ISO8601DateFormatter().string(from: date).prefix(10)) }
}

extension String {
    fileprivate var nonEmpty: String? { isEmpty ? nil : self }
}
