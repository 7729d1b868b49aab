import Crypto
import Foundation
import KizunaCore

/// Where an app finds its signed gate mirrors, and the keys it trusts them by: the update gate's path that does
/// not go through the API it guards.
///
/// Give the URLs of the `gate.json` files `kizuna serve --mirror-dir` writes, served by any static host or CDN
/// (`https://status.example.com/kizuna/shop/gate.json`), and the public key `kizuna gate mirror --public-key`
/// prints. While a key is being rotated, give both the old and the new one.
public struct GateMirrorSettings: Sendable {
    /// The mirror files, tried in order.
    public let urls: [URL]
    let keys: [Curve25519.Signing.PublicKey]

    /// Creates the settings.
    /// - Parameters:
    ///   - urls: The mirror files, tried in order until one verifies.
    ///   - publicKeys: The trusted keys, each the base64 of 32 bytes.
    /// - Throws: `validation_failed` for a key that is not one, or when either list is empty.
    public init(urls: [URL], publicKeys: [String]) throws(KizunaError) {
        guard !urls.isEmpty else { throw KizunaError(.validationFailed, "Give at least one gate mirror URL.", field: "urls") }
        guard !publicKeys.isEmpty else { throw KizunaError(.validationFailed, "Give at least one gate mirror public key.", field: "publicKeys") }
        var keys: [Curve25519.Signing.PublicKey] = []
        for text in publicKeys { keys.append(try GateMirror.publicKey(text)) }
        self.urls = urls
        self.keys = keys
    }
}

extension UpdateGate {
    /// What asking the mirrors came to.
    struct MirrorOutcome {
        /// Whether a mirror's policy was taken (it verified, and is not older than the one held).
        var adopted = false
        /// Why the last mirror tried was refused, if none was taken: unreachable, or altered, or signed by a key the
        /// app does not trust.
        var problem: KizunaError?
    }

    /// Fetches the mirrors in order and takes the first whose signature verifies and whose version is not older
    /// than the policy held: an older file, even signed, is ignored (a replayed mirror cannot lift a newer
    /// maintenance).
    func consultMirrors() async -> MirrorOutcome {
        guard let mirror else { return MirrorOutcome() }
        var outcome = MirrorOutcome()
        for url in mirror.urls {
            do {
                let client = KizunaHTTPClient(baseURL: url, timeout: app.http.timeout, session: app.http.session)
                let reply = try await client.exchange("GET", url.absoluteString)
                let content = try GateMirror.verify(reply.body, trusting: mirror.keys, app: app.appId)
                let adopted = state.withLock { stored -> Bool in
                    guard content.version >= stored.policyVersion else { return false }
                    stored.policy = content.policy
                    stored.policyVersion = content.version
                    stored.storeURL = content.storeURL
                    return true
                }
                if adopted { return MirrorOutcome(adopted: true, problem: nil) }
                outcome.problem = nil  // verified, only older than what is held: not a problem
            } catch {
                outcome.problem = error
            }
        }
        return outcome
    }
}
