import Crypto
import Foundation
import SwiftASN1
import X509

/// A certificate authority made for one test run and a server certificate it signed for `localhost` and
/// `127.0.0.1`: what a local TLS server presents, and what its client is told to trust.
enum TestCertificates {
    struct Identity {
        let authorityPEM: String
        let leafPEM: String
        let leafKeyPEM: String
    }

    static func make() throws -> Identity {
        let now = Date()
        let authorityKey = P256.Signing.PrivateKey()
        let authorityName = try DistinguishedName { CommonName("Kizuna test authority") }
        let authority = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(authorityKey.publicKey),
            notValidBefore: now - 3600, notValidAfter: now + 86_400 * 30, issuer: authorityName, subject: authorityName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: .init(authorityKey))
        let leafKey = P256.Signing.PrivateKey()
        let leaf = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(leafKey.publicKey),
            notValidBefore: now - 3600, notValidAfter: now + 86_400 * 30, issuer: authorityName,
            subject: try DistinguishedName { CommonName("localhost") }, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([.dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))])
            },
            issuerPrivateKey: .init(authorityKey))
        return Identity(
            authorityPEM: try authority.serializeAsPEM().pemString, leafPEM: try leaf.serializeAsPEM().pemString,
            leafKeyPEM: leafKey.pemRepresentation)
    }
}
