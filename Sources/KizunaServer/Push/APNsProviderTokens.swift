import Foundation
import JWTKit
import KizunaCore
import Synchronization

/// APNs provider tokens: ES256 JWTs (`kid` the key id; `iss` the team id, `iat` when signed), one per signing key,
/// reused until ``renewAfter`` and only then signed again. APNs refuses a token older than an hour
/// (`ExpiredProviderToken`) and one replaced more often than every 20 minutes (429 `TooManyProviderTokenUpdates`), so
/// renewal falls in between; a token APNs calls expired or invalid is replaced at once, once.
///
/// With a ``Shared`` store, instances sharing it send the same token: the first to find none (or an old one) signs
/// and stores it, the others take it from the store.
final class APNsProviderTokens: Sendable {
    /// Where instances keep the token they all use (by key fingerprint).
    struct Shared: Sendable {
        /// The stored token and its `iat`.
        let load: @Sendable (_ key: String) async throws -> (token: String, issuedAt: Date)?
        /// Stores `token` if the stored one is still `replacing` (none when `nil`); answers whether it did.
        let store: @Sendable (_ key: String, _ token: String, _ issuedAt: Date, _ replacing: Date?) async throws -> Bool
        /// Forgets the stored token if it is the one issued at `issuedAt` (APNs refused it).
        let drop: @Sendable (_ key: String, _ issuedAt: Date) async throws -> Void
    }

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
    private let shared: Shared?
    /// By key fingerprint.
    private let entries = Mutex<[String: Entry]>([:])
    private let signed = Atomic<Int>(0)

    init(now: @escaping @Sendable () -> Date = Date.init, shared: Shared? = nil) {
        self.now = now
        self.shared = shared
    }

    /// How many tokens were signed: each is one "update" APNs counts.
    var signedCount: Int { signed.load(ordering: .relaxed) }

    /// The token to send with `credentials`: the cached one while it is younger than ``renewAfter``, else a new one.
    func token(for credentials: APNsCredentials) async throws -> String {
        let now = now()
        let entry = entries.withLock { entries in
            if let entry = entries[credentials.keyFingerprint], now.timeIntervalSince(entry.issuedAt) < Self.renewAfter { return entry }
            let entry = Entry(id: UUID(), issuedAt: now, token: Task { try await self.obtain(credentials, now: now) })
            entries[credentials.keyFingerprint] = entry
            return entry
        }
        do {
            return try await entry.token.value
        } catch {
            forget(entry.id, credentials)
            throw error
        }
    }

    /// The shared token while young enough, else a new one (stored for the others, unless another instance stored
    /// its own first, which is then used).
    private func obtain(_ credentials: APNsCredentials, now: Date) async throws -> String {
        let key = credentials.keyFingerprint
        let stored = try await shared?.load(key)
        if let stored, now.timeIntervalSince(stored.issuedAt) < Self.renewAfter, now >= stored.issuedAt {
            setIssued(stored.issuedAt, credentials)
            return stored.token
        }
        // Whole seconds: APNs reads `iat` as an integer.
        let issuedAt = Date(timeIntervalSince1970: now.timeIntervalSince1970.rounded(.down))
        let token = try await Self.sign(credentials, issuedAt: issuedAt)
        if let shared, try await !shared.store(key, token, issuedAt, stored?.issuedAt), let theirs = try await shared.load(key) {
            setIssued(theirs.issuedAt, credentials)
            return theirs.token
        }
        signed.add(1, ordering: .relaxed)
        setIssued(issuedAt, credentials)
        return token
    }

    /// Ages the cached entry by the token's real `iat` (a shared token may be older than this instance's request).
    private func setIssued(_ issuedAt: Date, _ credentials: APNsCredentials) {
        entries.withLock { entries in
            guard let entry = entries[credentials.keyFingerprint] else { return }
            entries[credentials.keyFingerprint] = Entry(id: entry.id, issuedAt: issuedAt, token: entry.token)
        }
    }

    /// Forgets `token` after APNs refused it (`ExpiredProviderToken`, `InvalidProviderToken`), so the next send signs
    /// a new one; a token already replaced after another send's refusal is left alone.
    func refused(_ token: String, for credentials: APNsCredentials) async {
        guard let entry = entries.withLock({ $0[credentials.keyFingerprint] }), (try? await entry.token.value) == token else { return }
        forget(entry.id, credentials)
        try? await shared?.drop(credentials.keyFingerprint, entry.issuedAt)
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
