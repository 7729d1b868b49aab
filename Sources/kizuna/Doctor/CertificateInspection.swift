import Crypto
import Foundation
import KizunaCore
import NIOSSL
import SwiftASN1
@_spi(DisableValidityCheck) import X509
import _CryptoExtras

/// A server's certificate chain judged by what iOS requires of every TLS server certificate (Apple's "Requirements
/// for trusted certificates in iOS 13", and the 398-day limit of iOS 14): what fails every ATS configuration, and what
/// the probe cannot settle.
struct CertificateInspection: Sendable {
    /// One certificate as presented, for a person.
    struct Summary: Sendable, Codable, Hashable {
        var subject: String
        var issuer: String
        var key: String
        var signature: String
        var notBefore: Date?
        var notAfter: Date?
        var names: [String]
    }

    var certificates: [Summary] = []
    /// Fails every configuration.
    var problems: [ATSFindings.CertificateProblem] = []
    /// May fail on a device; the probe cannot tell.
    var notes: [String] = []

    /// When the iOS 13 rules (EKU, 825 days) and the 398-day rule began, and when Certificate Transparency did.
    static let iOS13Rules = Date(timeIntervalSince1970: 1_561_939_200)  // 2019-07-01
    static let lifetimeRule = Date(timeIntervalSince1970: 1_598_918_400)  // 2020-09-01
    static let transparencyRule = Date(timeIntervalSince1970: 1_539_561_600)  // 2018-10-15
    /// The embedded SCT list extension (RFC 6962 §3.3).
    static let sctList: ASN1ObjectIdentifier = [1, 3, 6, 1, 4, 1, 11129, 2, 4, 2]

    /// Judges `chain` (DER, leaf first) for `host`, trusting `customRoots` (from `--ca-file`) and `systemRoots`.
    static func inspect(
        chain: [[UInt8]], host: String, customRoots: [Certificate], systemRoots: CertificateStore, now: Date = Date()
    ) async -> CertificateInspection {
        var inspection = CertificateInspection()
        guard !chain.isEmpty else {
            inspection.problems.append(.init(.untrusted, "the server sent no certificate"))
            return inspection
        }
        var parsed: [Certificate] = []
        for (index, der) in chain.enumerated() {
            do {
                parsed.append(try Certificate(derEncoded: der))
            } catch {
                // swift-certificates refuses an RSA key under 2048 bits and an ECDSA-SHA-1 signature outright; say so
                // in iOS's terms.
                let which = index == 0 ? "the leaf" : "issuer \(index)"
                if let bits = weakRSABits(der), bits < 2048 {
                    inspection.problems.append(.init(.requirement, "\(which)'s RSA key is \(bits) bits; iOS requires 2048 or more"))
                } else if let digest = weakDigest(der) {
                    inspection.problems.append(.init(.requirement, "\(which) is signed with \(digest); iOS requires a SHA-2 signature"))
                } else {
                    inspection.problems.append(.init(.untrusted, "\(which) could not be read: \(error)"))
                }
                return inspection
            }
        }
        let leaf = parsed[0]
        inspection.certificates = parsed.map(summary)

        // Trust, apart from expiry, which is judged per certificate below.
        var verifier = Verifier(rootCertificates: systemRoots.appending(contentsOf: customRoots)) {
            RFC5280Policy.withValidityCheckDisabled()
        }
        var validated = parsed
        var untrusted: String?
        switch await verifier.validate(leaf: leaf, intermediates: CertificateStore(parsed.dropFirst())) {
        case .validCertificate(let chain):
            validated = Array(chain)
        case .couldNotValidate(let failures):
            let why = leaf.subject == leaf.issuer ? "it is self-signed" : "no chain leads from it to a trusted root (its issuer is \(leaf.issuer))"
            let detail = failures.first.map { "; \($0.policyFailureReason)" } ?? ""
            untrusted =
                "it is not trusted: \(why)\(detail). For a private CA the app's devices have installed, pass its certificate with --ca-file"
        }
        let publicRoot = untrusted == nil && !(validated.last.map(customRoots.contains) ?? false)

        // What the certificate is comes before whether it is trusted: a SHA-1 or 1024-bit chain is also untrusted.
        for (index, certificate) in validated.enumerated() {
            let which = role(certificate, at: index)
            if let weakness = keyWeakness(certificate.publicKey) { inspection.problems.append(.init(.requirement, "\(which)'s \(weakness)")) }
            if certificate.subject != certificate.issuer, certificate.signatureAlgorithm == .sha1WithRSAEncryption {
                // (swift-certificates reads no other SHA-1 or MD5 signature: those are caught by `weakDigest`.)
                inspection.problems.append(.init(.requirement, "\(which) is signed with SHA-1; iOS requires a SHA-2 signature"))
            }
        }
        if let untrusted { inspection.problems.append(.init(.untrusted, untrusted)) }
        for (index, certificate) in validated.enumerated() {
            let which = role(certificate, at: index)
            if now > certificate.notValidAfter {
                inspection.problems.append(.init(.expired, "\(which) expired on \(certificate.notValidAfter.formatted(.iso8601))"))
            } else if now < certificate.notValidBefore {
                inspection.problems.append(.init(.notYetValid, "\(which) is not valid until \(certificate.notValidBefore.formatted(.iso8601))"))
            }
        }

        if let problem = nameProblem(leaf, host: host) { inspection.problems.append(.init(.name, problem)) }
        if leaf.notValidBefore >= iOS13Rules {
            let usages = (try? leaf.extensions.extendedKeyUsage).flatMap { $0 }
            if usages?.contains(.serverAuth) != true {
                inspection.problems.append(
                    .init(
                        .requirement,
                        usages == nil
                            ? "it has no extendedKeyUsage; iOS requires one with serverAuth in certificates issued since 2019-07-01"
                            : "its extendedKeyUsage lacks serverAuth"))
            }
            let days = Int(leaf.notValidAfter.timeIntervalSince(leaf.notValidBefore) / 86_400)
            if days > 825 {
                inspection.problems.append(
                    .init(.requirement, "it is valid for \(days) days; iOS allows at most 825 for certificates issued since 2019-07-01"))
            } else if days > 398, publicRoot, leaf.notValidBefore >= lifetimeRule {
                inspection.problems.append(
                    .init(.requirement, "it is valid for \(days) days; iOS allows a publicly trusted one at most 398 since 2020-09-01"))
            }
        }
        if publicRoot, leaf.notValidBefore >= transparencyRule, leaf.extensions[oid: sctList] == nil {
            inspection.notes.append(
                "it embeds no SCTs; iOS requires Certificate Transparency for publicly trusted certificates, and the SCTs may instead come in the TLS extension or a stapled OCSP response, which this probe does not read"
            )
        }
        if publicRoot, inspection.problems.isEmpty {
            inspection.notes.append(
                "it is trusted through Debian's CA bundle; Apple's root store is a different list (https://support.apple.com/en-us/103272), so check its root is there"
            )
        }
        return inspection
    }

    /// How a problem names a certificate of the chain: the leaf, the root, or an issuer by its subject.
    static func role(_ certificate: Certificate, at index: Int) -> String {
        index == 0 ? "the leaf" : certificate.subject == certificate.issuer ? "the root" : "issuer \(certificate.subject)"
    }

    /// The leaf's DNS names (or IP addresses) must name `host`: iOS reads the SAN and never the common name.
    static func nameProblem(_ leaf: Certificate, host: String) -> String? {
        let listed = names(leaf)
        if listed.contains(where: { matches($0, host: host) }) { return nil }
        guard !listed.isEmpty else { return "it has no subjectAltName; iOS ignores the common name, so the name \(host) must be in the SAN" }
        return "the name \(host) is not in its subjectAltName (\(listed.joined(separator: ", ")))"
    }

    /// The DNS names and IP addresses in a certificate's subjectAltName.
    static func names(_ certificate: Certificate) -> [String] {
        ((try? certificate.extensions.subjectAlternativeNames).flatMap { $0 } ?? SubjectAlternativeNames([])).compactMap { name in
            switch name {
            case .dnsName(let dns): dns
            case .ipAddress(let octets): ipText(Array(octets.bytes))
            default: nil
            }
        }
    }

    /// RFC 6125 §6.4.3 as iOS applies it: a wildcard stands for exactly one whole left-most label.
    static func matches(_ pattern: String, host: String) -> Bool {
        let pattern = pattern.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "."))
        let host = host.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "."))
        guard pattern.hasPrefix("*.") else { return pattern == host }
        guard let dot = host.firstIndex(of: ".") else { return false }
        return host[host.index(after: dot)...] == pattern.dropFirst(2) && dot > host.startIndex
    }

    private static func ipText(_ bytes: [UInt8]) -> String {
        bytes.count == 4
            ? bytes.map(String.init).joined(separator: ".")
            : stride(from: 0, to: bytes.count, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }.joined(
                separator: ":")
    }

    /// ATS's key rule: RSA of 2048 bits or more, or an elliptic curve of 256 or more.
    static func keyWeakness(_ key: Certificate.PublicKey) -> String? {
        if let rsa = _RSA.Signing.PublicKey(key), rsa.keySizeInBits < 2048 {
            return "RSA key is \(rsa.keySizeInBits) bits; iOS requires 2048 or more"
        }
        return nil
    }

    /// The size of an RSA key swift-certificates will not load (under 2048 bits), read with BoringSSL.
    static func weakRSABits(_ der: [UInt8]) -> Int? {
        guard let certificate = try? NIOSSLCertificate(bytes: der, format: .der), let spki = try? certificate.extractPublicKey().toSPKIBytes(),
            let key = try? _RSA.Signing.PublicKey(unsafeDERRepresentation: spki)
        else { return nil }
        return key.keySizeInBits
    }

    /// The signature's digest when it is SHA-1 or MD5, read from the certificate's outer `signatureAlgorithm`.
    static func weakDigest(_ der: [UInt8]) -> String? {
        guard let root = try? DER.parse(der), case .constructed(let nodes) = root.content else { return nil }
        var children = nodes.makeIterator()
        guard children.next() != nil, let algorithm = children.next(), case .constructed(let parts) = algorithm.content,
            let first = parts.first(where: { _ in true }), let oid = try? ASN1ObjectIdentifier(derEncoded: first)
        else { return nil }
        return weakDigests[oid]
    }

    static let weakDigests: [ASN1ObjectIdentifier: String] = [
        [1, 2, 840, 10045, 4, 1]: "SHA-1", [1, 2, 840, 113549, 1, 1, 5]: "SHA-1", [1, 2, 840, 113549, 1, 1, 4]: "MD5",
    ]

    static func summary(_ certificate: Certificate) -> Summary {
        let key: String =
            if let rsa = _RSA.Signing.PublicKey(certificate.publicKey) {
                "RSA \(rsa.keySizeInBits)"
            } else if P256.Signing.PublicKey(certificate.publicKey) != nil {
                "EC P-256"
            } else if P384.Signing.PublicKey(certificate.publicKey) != nil {
                "EC P-384"
            } else if P521.Signing.PublicKey(certificate.publicKey) != nil {
                "EC P-521"
            } else {
                "\(certificate.publicKey)"
            }
        return Summary(
            subject: "\(certificate.subject)", issuer: "\(certificate.issuer)", key: key,
            signature: "\(certificate.signatureAlgorithm)".replacingOccurrences(of: "SignatureAlgorithm.", with: ""),
            notBefore: certificate.notValidBefore, notAfter: certificate.notValidAfter, names: names(certificate))
    }
}
