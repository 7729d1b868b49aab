/// The APNs environment a token belongs to: a development build's tokens work only with the sandbox.
public enum APNsEnvironment: String, Sendable, Hashable, Codable, CaseIterable {
    case sandbox
    case production
}

/// What `POST /v1/apps/{app}/push/devices` sends: an install's token and what targeting reads — the fields of a
/// ``DeviceContext``, which a push's `where` condition tests as remote config's conditions do, and the time zone.
public struct PushRegistration: Sendable, Hashable, Codable {
    public var installId: String
    /// The token's hex (any case), or the pre-iOS 13 `<…>` description; see ``APNsDeviceToken``.
    public var token: String
    public var environment: APNsEnvironment
    public var appVersion: String?
    public var buildNumber: String?
    public var platform: Platform?
    public var osVersion: String?
    /// A BCP 47 language tag (`ja-JP`), for localized notifications.
    public var locale: String?
    /// ISO 3166-1 alpha-2.
    public var country: String?
    /// Custom attributes for conditions.
    public var attributes: [String: AttributeValue]?
    /// An IANA time zone (`Asia/Tokyo`), for sends at the same local time everywhere.
    public var timeZone: String?

    public init(
        installId: String, token: String, environment: APNsEnvironment, appVersion: String? = nil, buildNumber: String? = nil,
        platform: Platform? = nil, osVersion: String? = nil, locale: String? = nil, country: String? = nil,
        attributes: [String: AttributeValue]? = nil, timeZone: String? = nil
    ) {
        self.installId = installId
        self.token = token
        self.environment = environment
        self.appVersion = appVersion
        self.buildNumber = buildNumber
        self.platform = platform
        self.osVersion = osVersion
        self.locale = locale
        self.country = country
        self.attributes = attributes
        self.timeZone = timeZone
    }

    /// The registration of `device`'s install: its context, the token and where it came from.
    public init(device: DeviceContext, token: String, environment: APNsEnvironment, timeZone: String?) {
        self.init(
            installId: device.installId ?? "", token: token, environment: environment, appVersion: device.appVersion,
            buildNumber: device.buildNumber, platform: device.platform, osVersion: device.osVersion, locale: device.locale,
            country: device.country, attributes: device.attributes, timeZone: timeZone)
    }
}

/// An install in the push registry, as the server answers it.
public struct PushDevice: Sendable, Hashable, Codable {
    public var installId: String
    /// The token, normalized: the lowercase hex of its bytes.
    public var token: String
    public var environment: APNsEnvironment
    public var appVersion: String?
    public var buildNumber: String?
    public var platform: Platform?
    public var osVersion: String?
    public var locale: String?
    public var country: String?
    public var attributes: [String: AttributeValue]?
    public var timeZone: String?
    /// The account it was registered as, when a session came with the registration.
    public var userId: String?
    /// When it was last registered (epoch milliseconds).
    public var registeredAt: Int64
    /// When APNs said the token no longer works (epoch milliseconds); pushes skip it until it is registered again.
    public var retiredAt: Int64?

    /// The registry's entry for `registration` (its token normalized), as `userId`, registered at `registeredAt`.
    public init(_ registration: PushRegistration, token: String, userId: String?, registeredAt: Int64, retiredAt: Int64? = nil) {
        installId = registration.installId
        self.token = token
        environment = registration.environment
        appVersion = registration.appVersion
        buildNumber = registration.buildNumber
        platform = registration.platform
        osVersion = registration.osVersion
        locale = registration.locale
        country = registration.country
        attributes = registration.attributes
        timeZone = registration.timeZone
        self.userId = userId
        self.registeredAt = registeredAt
        self.retiredAt = retiredAt
    }

    /// What conditions test: the device's context.
    public var context: DeviceContext {
        DeviceContext(
            appVersion: appVersion ?? "", buildNumber: buildNumber, platform: platform, osVersion: osVersion, locale: locale, country: country,
            installId: installId, attributes: attributes)
    }
}
