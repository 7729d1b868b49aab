import Foundation

/// What one app contributes to the site's apple-app-site-association file.
public struct AssociatedDomainSettings: Sendable, Hashable, Codable {
    /// List the app under `webcredentials`, so Password AutoFill offers the site's passwords in it.
    public var webCredentials: Bool
    /// The app's universal-link rules, in order.
    public var appLinks: [AppLinks.Component]
    /// Defaults for the app's rules.
    public var appLinkDefaults: AppLinks.Defaults?
    /// The bundle ids of the app's App Clips.
    public var appClips: [String]
    /// Also write the legacy `appID` + `paths` form, for clients older than iOS 13.
    public var legacyPaths: Bool

    /// Creates settings; by default the app shares credentials and opens no links.
    public init(
        webCredentials: Bool = true, appLinks: [AppLinks.Component] = [], appLinkDefaults: AppLinks.Defaults? = nil, appClips: [String] = [],
        legacyPaths: Bool = false
    ) {
        self.webCredentials = webCredentials
        self.appLinks = appLinks
        self.appLinkDefaults = appLinkDefaults
        self.appClips = appClips
        self.legacyPaths = legacyPaths
    }
}

extension AppSiteAssociation {
    /// The most Apple's CDN and devices read: 128 KB.
    public static let maximumBytes = 128 * 1024

    /// One app's entry: its team id, bundle id and settings.
    public struct Entry: Sendable, Hashable {
        public var teamId: String
        public var bundleId: String
        public var settings: AssociatedDomainSettings

        public init(teamId: String, bundleId: String, settings: AssociatedDomainSettings) {
            self.teamId = teamId
            self.bundleId = bundleId
            self.settings = settings
        }

        /// `<TeamID>.<bundle id>`.
        public var appID: String { "\(teamId).\(bundleId)" }
    }

    /// The file for `entries`, in their order (which is the order rules are tried in).
    /// - Parameter substitutionVariables: Variables the rules may use as `$(name)`.
    public init(generating entries: [Entry], substitutionVariables: [String: [String]] = [:]) {
        let linked = entries.filter { !$0.settings.appLinks.isEmpty }
        let legacy = linked.contains { $0.settings.legacyPaths }
        let details = linked.map { entry in
            AppLinks.Detail(
                appIDs: [entry.appID],
                components: entry.settings.appLinks,
                defaults: entry.settings.appLinkDefaults,
                appID: entry.settings.legacyPaths ? entry.appID : nil,
                paths: entry.settings.legacyPaths ? Self.legacyPaths(entry.settings.appLinks) : nil
            )
        }
        let credentials = entries.filter(\.settings.webCredentials).map(\.appID)
        let clips = entries.flatMap { entry in entry.settings.appClips.map { "\(entry.teamId).\($0)" } }
        self.init(
            applinks: details.isEmpty
                ? nil
                : AppLinks(
                    apps: legacy ? [] : nil, details: details, substitutionVariables: substitutionVariables.isEmpty ? nil : substitutionVariables),
            webcredentials: credentials.isEmpty ? nil : AppList(apps: credentials),
            appclips: clips.isEmpty ? nil : AppList(apps: clips)
        )
    }

    /// The legacy form of rules: path patterns only (`NOT ` for exclusions). Rules that need a query or fragment
    /// cannot be said in it and are left out, which only makes old clients open fewer links.
    static func legacyPaths(_ components: [AppLinks.Component]) -> [String] {
        components.compactMap { component in
            guard component.query == nil, component.fragment == nil else { return nil }
            let path = component.path ?? "*"
            return component.exclude == true ? "NOT \(path)" : path
        }
    }

    /// The file's bytes as served: JSON with sorted keys and unescaped slashes.
    /// - Throws: `validation_failed` naming the size when it is over ``maximumBytes``: Apple ignores such a
    ///   file entirely, so the change that causes it must be refused.
    public func encoded() throws(KizunaError) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data: Data
        do {
            data = try encoder.encode(self)
        } catch {
            throw KizunaError(.internalError, "The apple-app-site-association file could not be encoded.")
        }
        guard data.count <= Self.maximumBytes else {
            throw KizunaError(
                .validationFailed,
                "The apple-app-site-association file would be \(data.count) bytes; Apple reads at most \(Self.maximumBytes). Merge or remove link rules.",
                field: "applinks"
            )
        }
        return data
    }
}
