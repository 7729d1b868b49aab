import Foundation

/// A device context checked and parsed for evaluation, plus the app and the time.
public struct EvaluationContext: Sendable {
    public let appVersion: SemanticVersion?
    public let buildNumber: BuildNumber?
    public let osVersion: SemanticVersion?
    public let platform: Platform?
    public let appId: String?
    public let locale: LocaleTag?
    public let country: String?
    public let installId: String?
    public let attributes: [String: AttributeValue]
    /// The time that date and weekly windows are checked against.
    public let now: Date

    /// Parses `device`'s versions.
    ///
    /// - Throws: `validation_failed` naming every field (`$.appVersion`, `$.osVersion`, …) that does not parse.
    public init(device: DeviceContext, appId: String? = nil, now: Date = Date()) throws(KizunaError) {
        // Every device request comes through here: a field's JSON path is made only when it does not parse.
        var reader = DocumentReader()
        func parsed<Value>(_ text: String?, _ field: String, _ parse: (String) throws(VersionFormatError) -> Value) -> Value? {
            guard let text else { return nil }
            do {
                return try parse(text)
            } catch {
                reader.problem(.root[field], error.description, code: "bad_version")
                return nil
            }
        }
        appVersion = parsed(device.appVersion, "appVersion", SemanticVersion.init(parsing:))
        buildNumber = parsed(device.buildNumber, "buildNumber", BuildNumber.init(parsing:))
        osVersion = parsed(device.osVersion, "osVersion", SemanticVersion.init(parsing:))
        try reader.throwIfFailed("The device context")
        (platform, self.appId, locale, country, installId, attributes, self.now) = Self.rest(of: device, appId: appId, now: now)
    }

    /// The context of a device the server checked when it registered (a push registration): a version that is absent
    /// or does not parse is left out, so conditions on it are false.
    package init(registered device: DeviceContext, appId: String?, now: Date) {
        appVersion = try? SemanticVersion(parsing: device.appVersion)
        buildNumber = device.buildNumber.flatMap { try? BuildNumber(parsing: $0) }
        osVersion = device.osVersion.flatMap { try? SemanticVersion(parsing: $0) }
        (platform, self.appId, locale, country, installId, attributes, self.now) = Self.rest(of: device, appId: appId, now: now)
    }

    /// What both initializers take as it is: everything but the versions.
    private static func rest(
        of device: DeviceContext, appId: String?, now: Date
    ) -> (
        Platform?, String?, LocaleTag?, String?, String?, [String: AttributeValue], Date
    ) {
        (device.platform, appId, device.locale.map(LocaleTag.init), device.country?.uppercased(), device.installId, device.attributes ?? [:], now)
    }
}
