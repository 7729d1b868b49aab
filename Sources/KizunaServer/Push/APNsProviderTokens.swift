import Foundation
import JWTKit
import KizunaCore
import Synchronization

/// APNs provider tokens: ES256 JWTs (`kid` the key id; `iss` the team id, `iat` when signed), one per signing key,
/// reused until ``renewAfter`` and only then signed again. APNs refuses a token older than an hour
/// (`ExpiredProviderToken`) and one replaced more often than every 20 minutes (429 `TooManyProviderTokenUpdates`), so
/// renewal falls in between; a token APNs calls expired or invalid is replaced at once, once.
final class APNsProviderTokens: Sendable {
    /// The age at which a token is replaced: 40 minutes, inside APNs' 20–60.
    static let renewAfter: TimeInterval = 40 * 60

    /// A token being signed or signed, for one key: concurrent sends wait for the same one (two tokens signed at
    /// once would be two updates, and APNs answers the second 429).
    private struct Entry: Sendable {
        let id: UUID
        let issuedAt: Date
        let token: Task<String, any Error>
    }

    /// Tells the time (tests move it forward).
    private let now: @Sendable () -> Date
    /// By key fingerprint.
    private let entries = Mutex<[String: Entry]>([:])
    private let signed = Atomic<Int>(0)

    init(now: @escaping @Sendable () -> Date = Date.init) { self.now = now }

    /// How many tokens were signed: each is one "update" APNs counts.
    var signedCount: Int { signed.load(ordering: .relaxed) }

    /// The token to send with `credentials`: the cached one while it is younger than ``renewAfter``, else a new one.
    func token(for credentials: APNsCredentials) async throws -> String {
        let now = now()
        let entry = entries.withLock { entries in
            if let entry = entries[credentials.keyFingerprint], now.timeIntervalSince(entry.issuedAt) < Self.renewAfter { return entry }
            // Whole seconds: APNs reads `iat` as an integer.
            let issuedAt = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
            let entry = Entry(id: UUID(), issuedAt: issuedAt, token: Task { try await Self.sign(credentials, issuedAt: issuedAt) })
            entries[credentials.keyFingerprint] = entry
            signed.add(1, ordering: .relaxed)
            return entry
        }
        do {
            return try await entry.token.value
        } catch {
            forget(entry.id, credentials)
            throw error
        }
    }

    /// Forgets `token` after APNs refused it (`ExpiredProviderToken`, `InvalidProviderToken`), so the next send signs
    /// a new one; a token already replaced after another send's refusal is left alone.
    func refused(_ token: String, for credentials: APNsCredentials) async {
        guard let entry = entries.withLock({ $0[credentials.keyFingerprint] }), (try? await entry.token.value) == token else { return }
        forget(entry.id, credentials)
    }

    private func forget(_ id: UUID, _ credentials: APNsCredentials) {
        entries.withLock { entries in
            if entries[credentials.keyFingerprint]?.id == id { entries[credentials.keyFingerprint] = nil }
        }
    }

    private struct Claims: JWTPayload {
        let iss: IssuerClaim
        let iat: IssuedAtClaim

        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    private static func sign(_ credentials: APNsCredentials, issuedAt: Date) async throws -> String {
        let keys = JWTKeyCollection()
        let kid = JWKIdentifier(string: credentials.keyId)
        await keys.add(ecdsa: try ES256PrivateKey(pem: credentials.privateKey), kid: kid)
        return try await keys.sign(Claims(iss: IssuerClaim(value: credentials.teamId), iat: IssuedAtClaim(value: issuedAt)), kid: kid)
    }
}
