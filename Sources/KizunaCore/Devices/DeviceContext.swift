import Foundation

/// What a device says about itself when it fetches config or checks the update gate.
public struct DeviceContext: Sendable, Hashable, Codable {
    /// The app's version (CFBundleShortVersionString), such as `3.10.0`.
    public var appVersion: String
    /// The app's build number (CFBundleVersion), such as `451`.
    public var buildNumber: String?
    /// The platform the app runs on.
    public var platform: Platform?
    /// The operating system's version, such as `17.5.1`.
    public var osVersion: String?
    /// The device locale as a BCP 47 tag (`ja-JP`); `_` is accepted for `-`.
    public var locale: String?
    /// The device's country or region, ISO 3166-1 alpha-2.
    public var country: String?
    /// A random id the app created at install and keeps (the SDK does this for you).
    public var installId: String?
    /// Custom attributes for conditions.
    public var attributes: [String: AttributeValue]?

    /// Creates a context.
    public init(
        appVersion: String,
        buildNumber: String? = nil,
        platform: Platform? = nil,
        osVersion: String? = nil,
        locale: String? = nil,
        country: String? = nil,
        installId: String? = nil,
        attributes: [String: AttributeValue]? = nil
    ) {
        self.appVersion = appVersion
        self.buildNumber = buildNumber
        self.platform = platform
        self.osVersion = osVersion
        self.locale = locale
        self.country = country
        self.installId = installId
        self.attributes = attributes
    }
}
