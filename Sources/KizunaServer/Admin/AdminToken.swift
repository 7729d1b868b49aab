import Foundation
import KizunaCore

/// An admin API token as stored: its id and metadata, never its secret.
package struct AdminToken: Codable, Hashable, Sendable {
    /// Public id, the part of the token before the secret: `kza_<id>_<secret>`.
    package var id: String
    /// What the token is for, as given at creation.
    package var name: String
    package var createdAt: Date
    package var lastUsedAt: Date?
    package var revokedAt: Date?

    /// Whether the token still authenticates.
    package var isActive: Bool { revokedAt == nil }
}

/// The plaintext form of an admin token, `kza_<id>_<secret>`, shown once at creation.
///
/// Only a SHA-256 hash of the secret is stored. The secret carries 256 random bits, so a fast hash is enough: there
/// is nothing to brute-force. Verification looks the token up by its public id and compares hashes in constant time.
public struct AdminCredential: Sendable, Equatable {
    public let id: String
    let secret: String

    static let prefix = "kza_"

    /// A new random credential.
    static func generate() -> AdminCredential {
        // The id is hex so it can never contain the `_` that separates it from the secret.
        AdminCredential(id: hex(randomBytes(6)), secret: base64URL(randomBytes(32)))
    }

    /// Parses `kza_<id>_<secret>`; `nil` when it does not have that shape.
    package init?(_ text: String) {
        guard text.hasPrefix(Self.prefix) else { return nil }
        let rest = text.dropFirst(Self.prefix.count)
        guard let separator = rest.firstIndex(of: "_") else { return nil }
        let id = String(rest[..<separator])
        let secret = String(rest[rest.index(after: separator)...])
        guard id.count == 12, secret.count >= 32 else { return nil }
        self.init(id: id, secret: secret)
    }

    private init(id: String, secret: String) {
        self.id = id
        self.secret = secret
    }

    /// The whole token, to hand to the operator once.
    public var token: String { "\(Self.prefix)\(id)_\(secret)" }

    /// Hex SHA-256 of the secret: what is stored.
    var secretHash: String { Self.hash(secret) }

    static func hash(_ secret: String) -> String {
        sha256Hex(secret)
    }

    /// Whether this credential's secret hashes to `storedHash`, compared in constant time.
    func matches(storedHash: String) -> Bool {
        constantTimeEquals(Array(secretHash.utf8), Array(storedHash.utf8))
    }
}
