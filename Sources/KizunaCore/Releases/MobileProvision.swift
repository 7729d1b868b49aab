import Foundation
import SwiftASN1

/// The fields of an `embedded.mobileprovision` the release checks read.
///
/// The file is CMS `SignedData` (PKCS #7) whose encapsulated content is the profile, an XML property list. It is read
/// with SwiftASN1's BER parser (Apple writes these with indefinite lengths, which DER forbids) down to
/// `encapContentInfo.eContent`; the signature is not verified — the store and the device do that.
public struct MobileProvision: Sendable, Hashable, Codable {
    /// How the profile lets the app be installed.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// Debug builds on listed devices (`get-task-allow`).
        case development
        /// Release builds on listed devices; the store refuses them.
        case adHoc = "ad-hoc"
        /// In-house distribution to any device (`ProvisionsAllDevices`).
        case enterprise
        /// The store: no device list.
        case appStore = "app-store"
    }

    public var name: String?
    public var uuid: String?
    /// `TeamIdentifier`: usually one id.
    public var teamIdentifiers: [String]
    public var expirationDate: Date?
    public var kind: Kind
    /// `application-identifier`: `TEAMID.com.example.app`, or with a `*` wildcard.
    public var applicationIdentifier: String?
    /// `aps-environment`: `development` or `production`.
    public var apsEnvironment: String?
    /// `com.apple.developer.associated-domains`: the listed domains, or `["*"]` when the profile allows any (as
    /// profiles from Xcode's automatic signing do; the app's own signed entitlements then pick them).
    public var associatedDomains: [String]?
    public var keychainAccessGroups: [String]?

    /// Reads a profile from the bytes of an `embedded.mobileprovision`.
    /// - Throws: `bad_request` naming what is missing when the bytes are not CMS `SignedData` holding a property list.
    public init(contentsOf data: Data) throws(KizunaError) {
        try self.init(propertyList: try Self.payload(ofSignedData: data))
    }

    /// Reads a profile from its property list (the signed payload).
    /// - Throws: `bad_request` when the bytes are not a property-list dictionary.
    public init(propertyList: Data) throws(KizunaError) {
        guard let plist = try? PropertyListSerialization.propertyList(from: propertyList, format: nil) as? [String: Any] else {
            throw KizunaError(.badRequest, "The provisioning profile's payload is not a property-list dictionary.")
        }
        let entitlements = plist["Entitlements"] as? [String: Any] ?? [:]
        name = plist["Name"] as? String
        uuid = plist["UUID"] as? String
        teamIdentifiers = plist["TeamIdentifier"] as? [String] ?? []
        expirationDate = plist["ExpirationDate"] as? Date
        applicationIdentifier = entitlements["application-identifier"] as? String
        apsEnvironment = entitlements["aps-environment"] as? String
        let domains = entitlements["com.apple.developer.associated-domains"]
        associatedDomains = domains as? [String] ?? (domains as? String).map { [$0] }
        keychainAccessGroups = entitlements["keychain-access-groups"] as? [String]
        if plist["ProvisionsAllDevices"] as? Bool == true {
            kind = .enterprise
        } else if plist["ProvisionedDevices"] != nil {
            kind = entitlements["get-task-allow"] as? Bool == true ? .development : .adHoc
        } else {
            kind = .appStore
        }
    }

    private static let signedDataOID: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 7, 2]

    /// ContentInfo { contentType signedData, [0] SignedData { version, digestAlgorithms, encapContentInfo
    /// { eContentType, [0] eContent OCTET STRING }, … } } → the eContent bytes.
    static func payload(ofSignedData data: Data) throws(KizunaError) -> Data {
        func fail(_ reason: String) -> KizunaError {
            KizunaError(.badRequest, "The provisioning profile is not CMS signed data: \(reason).")
        }
        let root: ASN1Node
        do { root = try BER.parse(Array(data)) } catch { throw fail("\(error)") }
        guard root.identifier == .sequence, let info = children(root), info.count == 2,
            (try? ASN1ObjectIdentifier(berEncoded: info[0], withIdentifier: .objectIdentifier)) == signedDataOID
        else { throw fail("no ContentInfo of type signedData") }
        guard let wrapped = explicitZero(info[1]), let signedData = children(wrapped), signedData.count >= 3,
            let encapsulated = children(signedData[2]), encapsulated.count == 2, let content = explicitZero(encapsulated[1]),
            let bytes = octets(content)
        else { throw fail("SignedData has no encapsulated content") }
        return Data(bytes)
    }

    private static func children(_ node: ASN1Node) -> [ASN1Node]? {
        guard case .constructed(let nodes) = node.content else { return nil }
        return Array(nodes)
    }

    /// The single node inside a `[0] EXPLICIT` wrapper.
    private static func explicitZero(_ node: ASN1Node) -> ASN1Node? {
        guard node.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific), let inner = children(node), inner.count == 1 else {
            return nil
        }
        return inner[0]
    }

    /// An OCTET STRING's bytes; BER allows it constructed from primitive pieces, which are joined.
    private static func octets(_ node: ASN1Node) -> [UInt8]? {
        guard node.identifier == .octetString else { return nil }
        switch node.content {
        case .primitive(let bytes): return Array(bytes)
        case .constructed(let pieces):
            var bytes: [UInt8] = []
            for piece in pieces {
                guard let part = octets(piece) else { return nil }
                bytes += part
            }
            return bytes
        }
    }
}
