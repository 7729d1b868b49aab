import Crypto
import Foundation

/// A signed copy of an app's gate policy that any static host or CDN can serve, so the update gate still speaks
/// when the API it guards is down.
///
/// The server writes one per app (`<mirror-dir>/<app>/gate.json`) on every gate publish; the SDK fetches it when
/// the API is unreachable, erroring or slow, checks the Ed25519 signature against the public keys the app ships with,
/// refuses one older than the policy it holds (an old file replayed cannot lift a newer maintenance), and decides
/// with the same ``GatePolicy/decide(_:policyVersion:storeURL:)``.
///
/// The file is JSON: `{"kizunaGateMirror": 1, "keyId", "payload", "signature"}`, where `payload` is the base64url of
/// the ``Content`` JSON and `signature` the base64url Ed25519 signature of those payload bytes — so nothing depends
/// on how JSON is re-encoded on the way.
public enum GateMirror {
    /// The file format this code writes and reads.
    public static let format = 1

    /// What a mirror says: the app, the policy version and the policy, as `gate:check` would send them.
    public struct Content: Sendable, Hashable, Codable {
        /// The app id; a mirror for another app is refused.
        public var app: String
        /// The policy version; 0 when the app has none.
        public var version: Int64
        /// The policy, with the maintenance tester list emptied (the file is public).
        public var policy: JSONValue
        /// The app's store URL, the link of `require` and `recommend` notices that give none.
        public var storeURL: String?
        /// When the mirror was signed.
        public var signedAt: Date

        public init(app: String, version: Int64, policy: JSONValue, storeURL: String?, signedAt: Date) {
            self.app = app
            self.version = version
            self.policy = policy
            self.storeURL = storeURL
            self.signedAt = signedAt
        }
    }

    /// A public key apps trust, with its id, as `GET /v1/admin/gate-mirror/key` answers it.
    public struct KeyInfo: Sendable, Hashable, Codable {
        /// ``GateMirror/keyId(of:)``: the id each mirror names.
        public var keyId: String
        /// ``GateMirror/publicKeyText(_:)``: what the app passes to the SDK.
        public var publicKey: String

        public init(keyId: String, publicKey: String) {
            self.keyId = keyId
            self.publicKey = publicKey
        }
    }

    /// The file's JSON.
    package struct Envelope: Codable {
        package var kizunaGateMirror: Int
        package var keyId: String
        package var payload: String
        package var signature: String
    }

    /// The id of a public key: the first 8 bytes of the SHA-256 of its raw form, in hex.
    public static func keyId(of key: Curve25519.Signing.PublicKey) -> String {
        SHA256.hash(data: key.rawRepresentation).prefix(8).map { String(format: "%02x", $0) }.joined()
    }

    /// A public key as apps ship it: the base64 of its 32 raw bytes.
    public static func publicKeyText(_ key: Curve25519.Signing.PublicKey) -> String {
        key.rawRepresentation.base64EncodedString()
    }

    /// Reads a public key from ``publicKeyText(_:)``'s form.
    /// - Throws: `validation_failed` naming what is wrong.
    public static func publicKey(_ text: String) throws(KizunaError) -> Curve25519.Signing.PublicKey {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let bytes = Data(base64Encoded: trimmed), bytes.count == 32,
            let key = try? Curve25519.Signing.PublicKey(rawRepresentation: bytes)
        else {
            throw KizunaError(.validationFailed, "\"\(trimmed)\" is not a gate mirror public key (the base64 of 32 bytes).", field: "publicKey")
        }
        return key
    }

    /// The mirror file for `content`, signed with `key`.
    public static func sign(_ content: Content, with key: Curve25519.Signing.PrivateKey) throws(KizunaError) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        do {
            let payload = try encoder.encode(content)
            let signature = try key.signature(for: payload)
            let envelope = Envelope(
                kizunaGateMirror: format, keyId: keyId(of: key.publicKey), payload: base64URL(payload), signature: base64URL(signature))
            return try encoder.encode(envelope)
        } catch {
            throw KizunaError(.internalError, "The gate mirror could not be signed.")
        }
    }

    /// Checks a mirror file and answers what it says.
    /// - Parameters:
    ///   - data: The file's bytes.
    ///   - keys: The public keys the app trusts (more than one while a key is being rotated).
    ///   - app: The app id it must be for.
    /// - Throws: `bad_signature` when no trusted key signed it or it was altered; `validation_failed` when it is not
    ///   a mirror file, or is for another app.
    public static func verify(_ data: Data, trusting keys: [Curve25519.Signing.PublicKey], app: String) throws(KizunaError) -> Content {
        guard let envelope = try? JSONDecoder().decode(Envelope.self, from: data) else {
            throw KizunaError(
                .validationFailed, "The gate mirror is not a Kizuna gate mirror file (JSON with kizunaGateMirror, keyId, payload, signature).")
        }
        guard envelope.kizunaGateMirror == format else {
            throw KizunaError(.validationFailed, "The gate mirror is in format \(envelope.kizunaGateMirror); this SDK reads format \(format).")
        }
        guard let key = keys.first(where: { keyId(of: $0) == envelope.keyId }) else {
            let trusted = keys.map(keyId(of:)).joined(separator: ", ")
            throw KizunaError(
                .badSignature, "The gate mirror is signed with key \(envelope.keyId), which this app does not trust (it trusts: \(trusted)).",
                field: "keyId")
        }
        guard let payload = base64URLDecoded(envelope.payload), let signature = base64URLDecoded(envelope.signature),
            key.isValidSignature(signature, for: payload)
        else {
            throw KizunaError(
                .badSignature, "The gate mirror's signature does not verify with key \(envelope.keyId): the file was altered after signing.",
                field: "signature")
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        guard let content = try? decoder.decode(Content.self, from: payload) else {
            throw KizunaError(.validationFailed, "The gate mirror's payload is signed but is not a gate mirror's content.")
        }
        guard content.app == app else {
            throw KizunaError(.validationFailed, "The gate mirror is for app '\(content.app)', not '\(app)'.", field: "app")
        }
        return content
    }
}
