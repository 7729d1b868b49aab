import Foundation

/// An app registered with Kizuna, as the admin API returns it.
public struct AppRecord: Codable, Hashable, Sendable {
    /// The app's slug, unique in this Kizuna: `my-app`.
    public var id: String
    /// A display name.
    public var name: String
    /// The platform it ships on.
    public var platform: Platform
    /// The bundle identifier (application id on Android): `com.example.app`.
    public var bundleId: String
    /// The 10-character Apple Developer team id; `nil` for Android.
    public var teamId: String?
    /// The store page (App Store or Play) an update prompt opens by default.
    public var storeURL: String?
    /// When the app was registered.
    public var createdAt: Date
    /// When the app was last changed.
    public var updatedAt: Date

    /// Creates a record.
    public init(
        id: String,
        name: String,
        platform: Platform,
        bundleId: String,
        teamId: String?,
        storeURL: String?,
        createdAt: Date,
        updatedAt: Date
    ) {
        self.id = id
        self.name = name
        self.platform = platform
        self.bundleId = bundleId
        self.teamId = teamId
        self.storeURL = storeURL
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    /// `<TeamID>.<bundle id>`, the app identifier apple-app-site-association and entitlements use.
    public var appleAppID: String? { teamId.map { "\($0).\(bundleId)" } }
}

/// The fields to register an app with (`POST /v1/admin/apps`).
public struct NewApp: Codable, Hashable, Sendable {
    public var id: String
    public var name: String
    public var platform: Platform
    public var bundleId: String
    public var teamId: String?
    public var storeURL: String?

    /// Creates the input for a new app.
    public init(id: String, name: String, platform: Platform, bundleId: String, teamId: String? = nil, storeURL: String? = nil) {
        self.id = id
        self.name = name
        self.platform = platform
        self.bundleId = bundleId
        self.teamId = teamId
        self.storeURL = storeURL
    }
}

/// A partial update of an app (`PATCH /v1/admin/apps/{app}`): absent fields keep their value.
///
/// `teamId` and `storeURL` can be cleared by sending JSON `null`; leaving them out keeps them.
public struct AppPatch: Codable, Hashable, Sendable {
    public var name: String?
    public var platform: Platform?
    public var bundleId: String?
    public var teamId: Clearable<String>?
    public var storeURL: Clearable<String>?

    /// Creates a patch.
    public init(
        name: String? = nil,
        platform: Platform? = nil,
        bundleId: String? = nil,
        teamId: Clearable<String>? = nil,
        storeURL: Clearable<String>? = nil
    ) {
        self.name = name
        self.platform = platform
        self.bundleId = bundleId
        self.teamId = teamId
        self.storeURL = storeURL
    }

    private enum CodingKeys: String, CodingKey { case name, platform, bundleId, teamId, storeURL }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        name = try container.decodeIfPresent(String.self, forKey: .name)
        platform = try container.decodeIfPresent(Platform.self, forKey: .platform)
        bundleId = try container.decodeIfPresent(String.self, forKey: .bundleId)
        teamId = try Clearable.decode(from: container, forKey: .teamId)
        storeURL = try Clearable.decode(from: container, forKey: .storeURL)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(name, forKey: .name)
        try container.encodeIfPresent(platform, forKey: .platform)
        try container.encodeIfPresent(bundleId, forKey: .bundleId)
        try teamId?.encode(to: &container, forKey: .teamId)
        try storeURL?.encode(to: &container, forKey: .storeURL)
    }
}

/// A value in a partial update that is either set or explicitly cleared (JSON `null`).
public enum Clearable<Value: Codable & Hashable & Sendable>: Hashable, Sendable {
    case set(Value)
    case clear

    /// The new value, `nil` when cleared.
    public var value: Value? {
        if case .set(let value) = self { return value }
        return nil
    }

    static func decode<K: CodingKey>(from container: KeyedDecodingContainer<K>, forKey key: K) throws -> Self? {
        guard container.contains(key) else { return nil }
        if try container.decodeNil(forKey: key) { return .clear }
        return .set(try container.decode(Value.self, forKey: key))
    }

    func encode<K: CodingKey>(to container: inout KeyedEncodingContainer<K>, forKey key: K) throws {
        switch self {
        case .set(let value): try container.encode(value, forKey: key)
        case .clear: try container.encodeNil(forKey: key)
        }
    }
}

/// What any client may read about an app (`GET /v1/apps/{app}`): no admin-only fields.
public struct AppInfo: Codable, Hashable, Sendable {
    public var id: String
    public var name: String
    public var platform: Platform
    public var bundleId: String
    public var storeURL: String?

    /// The public view of a record.
    public init(_ record: AppRecord) {
        id = record.id
        name = record.name
        platform = record.platform
        bundleId = record.bundleId
        storeURL = record.storeURL
    }
}

/// The list of apps (`GET /v1/admin/apps`).
public struct AppList: Codable, Hashable, Sendable {
    public var apps: [AppRecord]
    public init(apps: [AppRecord]) { self.apps = apps }
}
