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

/// A custom attribute's value: a string, a number or a bool. Versions are sent as strings.
public enum AttributeValue: Sendable, Hashable, Codable {
    case string(String)
    case number(Double)
    case bool(Bool)

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "an attribute must be a string, a number or a bool")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        }
    }
}

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
        var reader = DocumentReader()
        appVersion = reader.parse(.string(device.appVersion), at: .root["appVersion"], SemanticVersion.init(parsing:))
        buildNumber = device.buildNumber.flatMap { reader.parse(.string($0), at: .root["buildNumber"], BuildNumber.init(parsing:)) }
        osVersion = device.osVersion.flatMap { reader.parse(.string($0), at: .root["osVersion"], SemanticVersion.init(parsing:)) }
        try reader.throwIfFailed("The device context")
        platform = device.platform
        self.appId = appId
        locale = device.locale.map(LocaleTag.init)
        country = device.country?.uppercased()
        installId = device.installId
        attributes = device.attributes ?? [:]
        self.now = now
    }
}

/// A BCP 47 locale tag normalised for matching: lower case, `-` between subtags.
public struct LocaleTag: Sendable, Hashable, CustomStringConvertible {
    /// The normalised tag, such as `ja-jp`.
    public let description: String

    /// Normalises `text` (`ja_JP` and `ja-JP` both become `ja-jp`).
    public init(_ text: String) {
        description = text.replacingOccurrences(of: "_", with: "-").lowercased()
    }

    /// The language subtag, such as `ja`.
    public var language: String { String(description.prefix { $0 != "-" }) }

    /// The tags to try, most specific first: `zh-hant-tw`, `zh-hant`, `zh`.
    public var fallbacks: [String] {
        let parts = description.split(separator: "-")
        return (1...max(parts.count, 1)).reversed().map { parts.prefix($0).joined(separator: "-") }
    }

    /// Whether `locale` is this tag or a more specific form of it (`ja` matches `ja-jp`).
    public func matches(_ locale: LocaleTag) -> Bool {
        locale.description == description || locale.description.hasPrefix(description + "-")
    }
}
