import Foundation
import KizunaCore

/// A random bearer secret — session token, refresh token, handoff code or reset token — and the hash that is stored
/// in its place.
///
/// Each carries 256 random bits behind a prefix that names its purpose (`kzs_`, `kzr_`, `kzh_`, `kzp_`), so a
/// secret pasted in the wrong place is refused by shape and leaked ones are easy to scan for. Only SHA-256 hashes
/// are stored: with 256 bits there is nothing to brute-force, so a fast hash is enough, and a lookup by hash does not
/// leak the secret through timing.
struct SessionSecret: Sendable, Hashable {
    enum Purpose: String, Sendable {
        case access = "kzs_"
        case refresh = "kzr_"
        case handoff = "kzh_"
        case passwordReset = "kzp_"
        /// A device token (apps) or device cookie (browsers), issued at a successful sign-in (see ``SignInThrottle``).
        case trust = "kzd_"
    }

    let text: String

    /// A new secret for `purpose`.
    static func generate(_ purpose: Purpose) -> SessionSecret {
        SessionSecret(text: purpose.rawValue + base64URL(randomBytes(32)))
    }

    /// `text` when it has the shape of a `purpose` secret, else `nil`.
    init?(_ text: String, purpose: Purpose) {
        guard text.hasPrefix(purpose.rawValue), text.utf8.count == purpose.rawValue.utf8.count + 43,
            text.utf8.allSatisfy({
                $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || (0x30...0x39).contains($0)
                    || ((0x41...0x5A).contains($0) || (0x61...0x7A).contains($0))
            })
        else { return nil }
        self.text = text
    }

    private init(text: String) { self.text = text }

    /// Hex SHA-256: what is stored and looked up.
    var hash: String { sha256Hex(text) }
}

/// A new account or session id: a prefix and 16 random bytes in hex. Ids are not secrets.
func newIdentifier(_ prefix: String) -> String {
    prefix + hex(randomBytes(16))
}
