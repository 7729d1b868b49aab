import Foundation

/// The `apple-app-site-association` file: which apps share credentials with the site, which URLs open which
/// app, and which App Clips belong to it.
public struct AppSiteAssociation: Sendable, Hashable, Codable {
    public var applinks: AppLinks?
    public var webcredentials: AppList?
    public var appclips: AppList?

    /// Creates a file.
    public init(applinks: AppLinks? = nil, webcredentials: AppList? = nil, appclips: AppList? = nil) {
        self.applinks = applinks
        self.webcredentials = webcredentials
        self.appclips = appclips
    }

    /// A list of app ids (`<TeamID>.<bundle id>`).
    public struct AppList: Sendable, Hashable, Codable {
        public var apps: [String]
        public init(apps: [String]) { self.apps = apps }
    }
}

/// The `applinks` section: the iOS 13+ form, optionally with the legacy form alongside for older clients.
public struct AppLinks: Sendable, Hashable, Codable {
    /// The legacy form's required empty list (`"apps": []`); `nil` when the legacy form is not included.
    public var apps: [String]?
    /// Defaults for every component of every detail.
    public var defaults: Defaults?
    /// The apps and their URL rules, in the order they are tried.
    public var details: [Detail]
    /// Variables the patterns may use as `$(name)`, besides the built-in ones.
    public var substitutionVariables: [String: [String]]?

    /// Creates the section.
    public init(apps: [String]? = nil, defaults: Defaults? = nil, details: [Detail], substitutionVariables: [String: [String]]? = nil) {
        self.apps = apps
        self.defaults = defaults
        self.details = details
        self.substitutionVariables = substitutionVariables
    }

    /// `caseSensitive` and `percentEncoded` defaults.
    public struct Defaults: Sendable, Hashable, Codable {
        public var caseSensitive: Bool?
        public var percentEncoded: Bool?
        public init(caseSensitive: Bool? = nil, percentEncoded: Bool? = nil) {
            self.caseSensitive = caseSensitive
            self.percentEncoded = percentEncoded
        }
    }

    /// Some apps and the components that decide which URLs they open.
    public struct Detail: Sendable, Hashable, Codable {
        public var appIDs: [String]
        public var components: [Component]
        public var defaults: Defaults?
        /// The legacy form's single app id (iOS 12 and earlier read only this and ``paths``).
        public var appID: String?
        /// The legacy form's path patterns; `NOT ` in front excludes.
        public var paths: [String]?

        public init(appIDs: [String], components: [Component], defaults: Defaults? = nil, appID: String? = nil, paths: [String]? = nil) {
            self.appIDs = appIDs
            self.components = components
            self.defaults = defaults
            self.appID = appID
            self.paths = paths
        }

        /// Whether the detail is in the legacy form only (`appID` and `paths`, no `components`), as files written
        /// for iOS 12 and earlier are: iOS 13 and later still read those `paths`.
        public var isLegacyOnly: Bool { components.isEmpty && paths != nil }

        /// The rules the matcher applies: the components, or for a legacy-only detail its `paths` as components
        /// (`NOT ` in front excludes; paths are matched case-sensitively).
        var rules: [Component] {
            guard isLegacyOnly else { return components }
            return (paths ?? []).map { path in
                path.hasPrefix("NOT ")
                    ? Component(path: String(path.dropFirst(4)), exclude: true, caseSensitive: true)
                    : Component(path: path, caseSensitive: true)
            }
        }

        private enum CodingKeys: String, CodingKey {
            case appIDs, components, defaults, appID, paths
        }

        /// Decodes either form: a legacy-only detail's `appID` becomes its one entry of ``appIDs``.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let appID = try container.decodeIfPresent(String.self, forKey: .appID)
            let appIDs = try container.decodeIfPresent([String].self, forKey: .appIDs)
            guard let appIDs = appIDs ?? appID.map({ [$0] }) else {
                throw DecodingError.keyNotFound(
                    CodingKeys.appIDs, .init(codingPath: container.codingPath, debugDescription: "A detail needs appIDs (or the legacy appID)."))
            }
            self.init(
                appIDs: appIDs,
                components: try container.decodeIfPresent([Component].self, forKey: .components) ?? [],
                defaults: try container.decodeIfPresent(Defaults.self, forKey: .defaults),
                appID: appID,
                paths: try container.decodeIfPresent([String].self, forKey: .paths))
        }

        /// Encodes the detail as it was: a legacy-only detail without the `appIDs` and `components` it never had.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            if !(isLegacyOnly && appIDs == [appID]) { try container.encode(appIDs, forKey: .appIDs) }
            if !isLegacyOnly { try container.encode(components, forKey: .components) }
            try container.encodeIfPresent(defaults, forKey: .defaults)
            try container.encodeIfPresent(appID, forKey: .appID)
            try container.encodeIfPresent(paths, forKey: .paths)
        }
    }

    /// One rule: the URL parts it matches, and whether a match opens the app or excludes the URL.
    public struct Component: Sendable, Hashable, Codable {
        /// The path pattern (`"/"`); absent matches any path.
        public var path: String?
        /// The query: one pattern for the whole query string, or a pattern per query item.
        public var query: Query?
        /// The fragment pattern (`"#"`).
        public var fragment: String?
        /// A match means the app does *not* open the URL.
        public var exclude: Bool?
        public var comment: String?
        public var caseSensitive: Bool?
        public var percentEncoded: Bool?

        public init(
            path: String? = nil, query: Query? = nil, fragment: String? = nil, exclude: Bool? = nil, comment: String? = nil,
            caseSensitive: Bool? = nil, percentEncoded: Bool? = nil
        ) {
            self.path = path
            self.query = query
            self.fragment = fragment
            self.exclude = exclude
            self.comment = comment
            self.caseSensitive = caseSensitive
            self.percentEncoded = percentEncoded
        }

        enum CodingKeys: String, CodingKey {
            case path = "/"
            case query = "?"
            case fragment = "#"
            case exclude, comment, caseSensitive, percentEncoded
        }
    }

    /// A query pattern.
    public enum Query: Sendable, Hashable, Codable {
        /// One pattern for the whole query string.
        case whole(String)
        /// A pattern per query item; an item the URL lacks counts as empty, so `"?*"` requires it.
        case items([String: String])

        public init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let whole = try? container.decode(String.self) {
                self = .whole(whole)
            } else {
                self = .items(try container.decode([String: String].self))
            }
        }

        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .whole(let pattern): try container.encode(pattern)
            case .items(let items): try container.encode(items)
            }
        }
    }
}

extension AppLinks {
    /// The app that opens `url`, with Apple's first-match rules: details are tried in order; within a detail the
    /// first component that matches decides — an `exclude` component means that detail's apps do not open it,
    /// any other means its first app does. `nil` when no detail claims the URL. A legacy-only detail is matched by
    /// its `paths` (see ``Detail/isLegacyOnly``).
    public func appID(opening url: URL) -> String? {
        let variables = AppLinkPattern.builtInVariables.merging(
            (substitutionVariables ?? [:]).mapValues { $0.map(AppLinkPattern.init) }, uniquingKeysWith: { _, own in own })
        guard let parts = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return nil }
        for detail in details {
            for component in detail.rules {
                let caseSensitive = component.caseSensitive ?? detail.defaults?.caseSensitive ?? defaults?.caseSensitive ?? true
                let percentEncoded = component.percentEncoded ?? detail.defaults?.percentEncoded ?? defaults?.percentEncoded ?? true
                guard Self.matches(component, parts, caseSensitive: caseSensitive, percentEncoded: percentEncoded, variables: variables) else {
                    continue
                }
                if component.exclude == true { break }
                return detail.appIDs.first
            }
        }
        return nil
    }

    private static func matches(
        _ component: Component, _ url: URLComponents, caseSensitive: Bool, percentEncoded: Bool, variables: [String: [AppLinkPattern]]
    ) -> Bool {
        func test(_ pattern: String?, _ text: String) -> Bool {
            guard let pattern else { return true }
            return AppLinkPattern(pattern).matches(text, caseSensitive: caseSensitive, variables: variables)
        }
        let path = percentEncoded ? url.percentEncodedPath : url.path
        guard test(component.path, path.isEmpty ? "/" : path) else { return false }
        guard test(component.fragment, (percentEncoded ? url.percentEncodedFragment : url.fragment) ?? "") else { return false }
        switch component.query {
        case nil: return true
        case .whole(let pattern): return test(pattern, (percentEncoded ? url.percentEncodedQuery : url.query) ?? "")
        case .items(let items):
            let present = (url.queryItems ?? []).reduce(into: [String: String]()) { values, item in
                if values[item.name] == nil { values[item.name] = item.value ?? "" }
            }
            return items.allSatisfy { name, pattern in test(pattern, present[name] ?? "") }
        }
    }
}
