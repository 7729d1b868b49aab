/// The APNs environment a token belongs to: a development build's tokens work only with the sandbox.
public enum APNsEnvironment: String, Sendable, Hashable, Codable, CaseIterable {
    case sandbox
    case production
}

/// What `POST /v1/apps/{app}/push/devices` sends: an install's token and what targeting reads.
public struct PushRegistration: Sendable, Hashable, Codable {
    public var installId: String
    /// The token's hex (any case), or the pre-iOS 13 `<…>` description; see ``APNsDeviceToken``.
    public var token: String
    public var environment: APNsEnvironment
    public var appVersion: String?
    /// A BCP 47 language tag (`ja-JP`), for localized notifications.
    public var locale: String?
    /// An IANA time zone (`Asia/Tokyo`), for sends at the same local time everywhere.
    public var timeZone: String?

    public init(
        installId: String, token: String, environment: APNsEnvironment, appVersion: String? = nil, locale: String? = nil, timeZone: String? = nil
    ) {
        self.installId = installId
        self.token = token
        self.environment = environment
        self.appVersion = appVersion
        self.locale = locale
        self.timeZone = timeZone
    }
}

/// An install in the push registry, as the server answers it.
public struct PushDevice: Sendable, Hashable, Codable {
    public var installId: String
    /// The token, normalized: the lowercase hex of its bytes.
    public var token: String
    public var environment: APNsEnvironment
    public var appVersion: String?
    public var locale: String?
    public var timeZone: String?
    /// The account it was registered as, when a session came with the registration.
    public var userId: String?
    /// When it was last registered (epoch milliseconds).
    public var registeredAt: Int64

    public init(
        installId: String, token: String, environment: APNsEnvironment, appVersion: String?, locale: String?, timeZone: String?, userId: String?,
        registeredAt: Int64
    ) {
        self.installId = installId
        self.token = token
        self.environment = environment
        self.appVersion = appVersion
        self.locale = locale
        self.timeZone = timeZone
        self.userId = userId
        self.registeredAt = registeredAt
    }
}
