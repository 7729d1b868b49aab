import Crypto
import Foundation

/// The answer of a session's last refresh, sealed so that only the holder of the refresh token it was exchanged for
/// can open it: AES-GCM under a key derived (HKDF-SHA256) from that token, bound to the session id.
///
/// The store keeps only hashes of live tokens, so without this a retried refresh could not be answered with the pair
/// the lost answer carried. A copy of the store cannot open it (it holds the token's SHA-256, not the token), and it
/// is overwritten at the next exchange.
enum RefreshGrace {
    private struct Payload: Codable {
        var access: String
        var refresh: String
        var expiresAt: Int64
        var refreshExpiresAt: Int64
    }

    /// `issued` sealed under `exchanged`, as base64 text for the `refresh_grace` column.
    static func seal(_ issued: IssuedSession, under exchanged: SessionSecret) throws -> String {
        let payload = Payload(
            access: issued.access.text, refresh: issued.refresh?.text ?? "", expiresAt: issued.expiresAt,
            refreshExpiresAt: issued.refreshExpiresAt ?? issued.expiresAt)
        let box = try AES.GCM.seal(
            try JSONEncoder().encode(payload), using: key(exchanged), authenticating: Data(issued.id.utf8))
        guard let combined = box.combined else { throw CryptoKitError.incorrectParameterSize }
        return combined.base64EncodedString()
    }

    /// The pair sealed in `text`, or `nil` when `exchanged` does not open it.
    static func open(_ text: String, with exchanged: SessionSecret, session id: String) -> IssuedSession? {
        guard let combined = Data(base64Encoded: text), let box = try? AES.GCM.SealedBox(combined: combined),
            let plain = try? AES.GCM.open(box, using: key(exchanged), authenticating: Data(id.utf8)),
            let payload = try? JSONDecoder().decode(Payload.self, from: plain),
            let access = SessionSecret(payload.access, purpose: .access), let refresh = SessionSecret(payload.refresh, purpose: .refresh)
        else { return nil }
        return IssuedSession(id: id, access: access, expiresAt: payload.expiresAt, refresh: refresh, refreshExpiresAt: payload.refreshExpiresAt)
    }

    private static func key(_ exchanged: SessionSecret) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(
            inputKeyMaterial: SymmetricKey(data: Data(exchanged.text.utf8)), info: Data("kizuna refresh grace v1".utf8), outputByteCount: 32)
    }
}
