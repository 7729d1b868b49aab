import Foundation

/// A TLS version, as App Transport Security names it.
public enum ATSTLSVersion: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    case tls10 = "TLSv1.0"
    case tls11 = "TLSv1.1"
    case tls12 = "TLSv1.2"
    case tls13 = "TLSv1.3"

    public static func < (lhs: Self, rhs: Self) -> Bool { allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)! }
}

/// One App Transport Security configuration for a host: the keys of its `NSExceptionDomains` entry, or
/// `NSAllowsArbitraryLoads`. The default (no keys) is what every app gets: TLS 1.2 or later, forward-secret cipher
/// suites, HTTPS only.
public struct ATSConfiguration: Sendable, Hashable, Codable {
    public var allowsArbitraryLoads: Bool
    /// `NSExceptionMinimumTLSVersion`; `nil` leaves ATS's TLS 1.2.
    public var minimumTLSVersion: ATSTLSVersion?
    /// `NSExceptionRequiresForwardSecrecy` (ATS's default is `true`).
    public var requiresForwardSecrecy: Bool
    /// `NSExceptionAllowsInsecureHTTPLoads`.
    public var allowsInsecureHTTPLoads: Bool
    /// `NSIncludesSubdomains`.
    public var includesSubdomains: Bool

    public init(
        allowsArbitraryLoads: Bool = false, minimumTLSVersion: ATSTLSVersion? = nil, requiresForwardSecrecy: Bool = true,
        allowsInsecureHTTPLoads: Bool = false, includesSubdomains: Bool = false
    ) {
        self.allowsArbitraryLoads = allowsArbitraryLoads
        self.minimumTLSVersion = minimumTLSVersion
        self.requiresForwardSecrecy = requiresForwardSecrecy
        self.allowsInsecureHTTPLoads = allowsInsecureHTTPLoads
        self.includesSubdomains = includesSubdomains
    }

    /// ATS's default: no keys.
    public static let `default` = ATSConfiguration()

    /// Whether it has no keys at all.
    public var isDefault: Bool { self == .default }

    /// The oldest TLS version a connection may use under it.
    public var effectiveMinimumTLSVersion: ATSTLSVersion { allowsArbitraryLoads ? .tls10 : minimumTLSVersion ?? .tls12 }

    /// Whether only forward-secret cipher suites are offered.
    public var effectiveForwardSecrecy: Bool { allowsArbitraryLoads ? false : requiresForwardSecrecy }

    /// Whether `http://` loads are allowed.
    public var effectiveInsecureHTTP: Bool { allowsArbitraryLoads || allowsInsecureHTTPLoads }

    /// The exception keys, in the order Apple's documentation lists them, for `host`.
    var exceptionKeys: [(key: String, value: PlistValue)] {
        var keys: [(String, PlistValue)] = []
        if allowsInsecureHTTPLoads { keys.append(("NSExceptionAllowsInsecureHTTPLoads", .bool(true))) }
        if let minimumTLSVersion { keys.append(("NSExceptionMinimumTLSVersion", .string(minimumTLSVersion.rawValue))) }
        if !requiresForwardSecrecy { keys.append(("NSExceptionRequiresForwardSecrecy", .bool(false))) }
        if includesSubdomains { keys.append(("NSIncludesSubdomains", .bool(true))) }
        return keys.sorted { $0.0 < $1.0 }
    }

    enum PlistValue {
        case bool(Bool)
        case string(String)
    }

    /// The ATS dictionary in old-style property-list syntax, as `nscurl --ats-diagnostics --verbose` prints it.
    public func plistDescription(host: String) -> String { ATSDomainException.plistDescription([.init(domain: host, configuration: self)]) }

    /// The `NSAppTransportSecurity` entry to paste into Info.plist, as XML.
    public func infoPlistXML(host: String) -> String { ATSDomainException.infoPlistXML([.init(domain: host, configuration: self)]) }

    /// nscurl quotes a string that is not a plain word (a dot is enough).
    static func quoted(_ text: String) -> String {
        text.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" } ? text : "\"\(text)\""
    }

}

/// One domain's entry in `NSExceptionDomains` (or, when its configuration allows arbitrary loads, the app-wide key):
/// what the smallest exception is made of. A load that redirects to another host's `http://` needs two.
public struct ATSDomainException: Sendable, Hashable, Codable {
    public var domain: String
    public var configuration: ATSConfiguration

    public init(domain: String, configuration: ATSConfiguration) {
        self.domain = domain
        self.configuration = configuration
    }

    /// The entries as one ATS dictionary in old-style property-list syntax, as nscurl prints it.
    public static func plistDescription(_ exceptions: [ATSDomainException]) -> String {
        if exceptions.contains(where: \.configuration.allowsArbitraryLoads) { return "{\n    NSAllowsArbitraryLoads = true;\n}" }
        let domains = exceptions.filter { !$0.configuration.exceptionKeys.isEmpty }
        guard !domains.isEmpty else { return "{\n}" }
        var lines = ["{", "    NSExceptionDomains =     {"]
        for exception in domains {
            lines.append("        \(ATSConfiguration.quoted(exception.domain)) =         {")
            for (key, value) in exception.configuration.exceptionKeys {
                let text =
                    switch value {
                    case .bool(let flag): flag ? "true" : "false"
                    case .string(let string): ATSConfiguration.quoted(string)
                    }
                lines.append("            \(key) = \(text);")
            }
            lines.append("        };")
        }
        lines += ["    };", "}"]
        return lines.joined(separator: "\n")
    }

    /// The `NSAppTransportSecurity` entry to paste into Info.plist, as XML.
    public static func infoPlistXML(_ exceptions: [ATSDomainException]) -> String {
        var lines = ["<key>NSAppTransportSecurity</key>", "<dict>"]
        let domains = exceptions.filter { !$0.configuration.exceptionKeys.isEmpty }
        if exceptions.contains(where: \.configuration.allowsArbitraryLoads) {
            lines += ["    <key>NSAllowsArbitraryLoads</key>", "    <true/>"]
        } else if !domains.isEmpty {
            lines += ["    <key>NSExceptionDomains</key>", "    <dict>"]
            for exception in domains {
                lines += ["        <key>\(exception.domain.xmlEscaped)</key>", "        <dict>"]
                for (key, value) in exception.configuration.exceptionKeys {
                    lines.append("            <key>\(key)</key>")
                    switch value {
                    case .bool(let flag): lines.append(flag ? "            <true/>" : "            <false/>")
                    case .string(let string): lines.append("            <string>\(string.xmlEscaped)</string>")
                    }
                }
                lines.append("        </dict>")
            }
            lines.append("    </dict>")
        }
        lines.append("</dict>")
        return lines.joined(separator: "\n")
    }
}
