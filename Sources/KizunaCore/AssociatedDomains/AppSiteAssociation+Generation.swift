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
    /// Variables the app's rules use as `$(name)`. The file has one set for every app, so two apps may not give
    /// one name different values.
    public var substitutionVariables: [String: [String]]

    /// Creates settings; by default the app shares credentials and opens no links.
    public init(
        webCredentials: Bool = true, appLinks: [AppLinks.Component] = [], appLinkDefaults: AppLinks.Defaults? = nil, appClips: [String] = [],
        legacyPaths: Bool = false, substitutionVariables: [String: [String]] = [:]
    ) {
        self.webCredentials = webCredentials
        self.appLinks = appLinks
        self.appLinkDefaults = appLinkDefaults
        self.appClips = appClips
        self.legacyPaths = legacyPaths
        self.substitutionVariables = substitutionVariables
    }

    private enum CodingKeys: String, CodingKey {
        case webCredentials, appLinks, appLinkDefaults, appClips, legacyPaths, substitutionVariables
    }

    /// Decodes settings; every field may be left out and takes its default.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            webCredentials: try container.decodeIfPresent(Bool.self, forKey: .webCredentials) ?? true,
            appLinks: try container.decodeIfPresent([AppLinks.Component].self, forKey: .appLinks) ?? [],
            appLinkDefaults: try container.decodeIfPresent(AppLinks.Defaults.self, forKey: .appLinkDefaults),
            appClips: try container.decodeIfPresent([String].self, forKey: .appClips) ?? [],
            legacyPaths: try container.decodeIfPresent(Bool.self, forKey: .legacyPaths) ?? false,
            substitutionVariables: try container.decodeIfPresent([String: [String]].self, forKey: .substitutionVariables) ?? [:]
        )
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
        var variables = substitutionVariables
        for entry in entries { variables.merge(entry.settings.substitutionVariables) { first, _ in first } }
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
                    apps: legacy ? [] : nil, details: details, substitutionVariables: variables.isEmpty ? nil : variables),
            webcredentials: credentials.isEmpty ? nil : AppList(apps: credentials),
            appclips: clips.isEmpty ? nil : AppList(apps: clips)
        )
    }

    /// Problems that make `entries` unfit for one file: a variable two apps define differently, an App Clip id
    /// that is not a child of its app's bundle id.
    public static func problems(in entries: [Entry]) -> [KizunaError.Detail] {
        var problems: [KizunaError.Detail] = []
        var variables: [String: (value: [String], appID: String)] = [:]
        for entry in entries {
            for (name, value) in entry.settings.substitutionVariables.sorted(by: { $0.key < $1.key }) {
                if let earlier = variables[name], earlier.value != value {
                    problems.append(
                        KizunaError.Detail(
                            code: "variable_conflict",
                            message: "$(\(name)) is defined differently by \(earlier.appID) and \(entry.appID); the file has one set of variables.",
                            field: "substitutionVariables.\(name)"))
                } else {
                    variables[name] = (value, entry.appID)
                }
            }
            for clip in entry.settings.appClips where !clip.hasPrefix(entry.bundleId + ".") {
                problems.append(
                    KizunaError.Detail(
                        code: "bad_app_clip",
                        message: "App Clip '\(clip)' must have a bundle id under its app's, '\(entry.bundleId).…'.", field: "appClips"))
            }
        }
        return problems
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
