import Foundation

/// An app's API key as the admin API shows it: never its secret, which is shown once at creation.
///
/// API keys let callers without an account in (`@auth` rules with `allow: public`), as AppSync's API keys do. Each
/// expires after 1 to 365 days; an expired or revoked key is refused with its own error code.
public struct APIKeyInfo: Sendable, Codable, Hashable {
    /// The public part of the key, `kzk_<id>_…`.
    public var id: String
    /// What the key is for.
    public var name: String
    public var createdAt: Date
    public var expiresAt: Date
    public var revokedAt: Date?
    public var lastUsedAt: Date?

    public init(id: String, name: String, createdAt: Date, expiresAt: Date, revokedAt: Date? = nil, lastUsedAt: Date? = nil) {
        self.id = id
        self.name = name
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.revokedAt = revokedAt
        self.lastUsedAt = lastUsedAt
    }
}

/// The body of `POST /v1/admin/apps/{app}/api-keys`.
public struct NewAPIKey: Sendable, Codable, Hashable {
    /// What the key is for (for the list); at most 100 characters.
    public var name: String?
    /// Days until the key expires: 1 to 365.
    public var expiresInDays: Int

    public init(name: String? = nil, expiresInDays: Int) {
        self.name = name
        self.expiresInDays = expiresInDays
    }
}

/// A new API key: its secret `key`, shown this once, and its record.
public struct CreatedAPIKey: Sendable, Codable, Hashable {
    /// The whole key, `kzk_<id>_<secret>`: what the app sends as `X-Api-Key`.
    public var key: String
    public var info: APIKeyInfo

    public init(key: String, info: APIKeyInfo) {
        self.key = key
        self.info = info
    }
}

/// The answer of `GET /v1/admin/apps/{app}/api-keys`.
public struct APIKeyList: Sendable, Codable, Hashable {
    public var keys: [APIKeyInfo]
    public init(keys: [APIKeyInfo]) { self.keys = keys }
}

/// The groups an account is in: `GET /v1/admin/users/{user}/groups` and the answer of adding or removing one.
public struct UserGroups: Sendable, Codable, Hashable {
    public var groups: [String]
    public init(groups: [String]) { self.groups = groups }
}

extension KizunaError.Code {
    /// The API key has passed its expiry; create a new one (401).
    public static let apiKeyExpired: Self = "api_key_expired"
    /// The API key was revoked (401).
    public static let apiKeyRevoked: Self = "api_key_revoked"
}
