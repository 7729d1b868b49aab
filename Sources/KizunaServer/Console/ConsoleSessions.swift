import Crypto
import Foundation
import KizunaCore
import SQLKit

/// A console session's cookie value, `kzc_<id>_<secret>`: a public id to look the session up by and 256 random bits
/// of which only the SHA-256 is stored (as for admin tokens, a fast hash is enough for a random secret).
struct ConsoleCredential: Sendable, Equatable {
    let id: String
    private let secret: String

    static let prefix = "kzc_"

    static func generate() -> ConsoleCredential {
        ConsoleCredential(id: hex(randomBytes(8)), secret: base64URL(randomBytes(32)))
    }

    /// Parses `kzc_<id>_<secret>`; `nil` when it does not have that shape.
    init?(_ text: String) {
        guard text.hasPrefix(Self.prefix) else { return nil }
        let rest = text.dropFirst(Self.prefix.count)
        guard let separator = rest.firstIndex(of: "_") else { return nil }
        let (id, secret) = (String(rest[..<separator]), String(rest[rest.index(after: separator)...]))
        guard id.count == 16, secret.count == 43 else { return nil }
        self.init(id: id, secret: secret)
    }

    private init(id: String, secret: String) {
        self.id = id
        self.secret = secret
    }

    /// The cookie's value.
    var text: String { "\(Self.prefix)\(id)_\(secret)" }

    /// What is stored of the secret.
    var secretHash: String { sha256Hex(secret) }

    /// The session's CSRF token, which every console form carries: derived from the secret (an HMAC), so it is stored
    /// nowhere, cannot be computed without the cookie's value, and ends with the session.
    var csrfToken: String {
        base64URL(Data(HMAC<SHA256>.authenticationCode(for: Data("kizuna console csrf".utf8), using: SymmetricKey(data: Data(secret.utf8)))))
    }

    /// Whether `token` is this session's CSRF token, compared in constant time.
    func acceptsCSRF(_ token: String?) -> Bool {
        constantTimeEquals(Array((token ?? "").utf8), Array(csrfToken.utf8))
    }
}

/// A signed-in console session: the admin token it acts as and the credential the browser presented.
struct ConsoleSession: Sendable {
    let id: String
    let token: AdminToken
    let credential: ConsoleCredential
}

/// The console's sessions in the store (`console_sessions`, see ``CoreMigrations/consoleSessions``), shared by every
/// instance on the same store.
struct ConsoleSessionStore: Sendable {
    let database: KizunaDatabase
    /// How long a session lasts at most after sign-in.
    let lifetime: Duration
    /// How long a session lasts unused.
    let idleLimit: Duration

    /// Opens a session acting as `token`, after removing every session that has ended (an indexed delete: sign-ins are
    /// rare). - Returns: the credential for the cookie.
    func open(as token: AdminToken) async throws -> ConsoleCredential {
        let credential = ConsoleCredential.generate()
        let now = EpochMillis.now
        try await database.transaction { db in
            try await db.raw("DELETE FROM console_sessions WHERE expires_at <= \(bind: now) OR last_seen_at <= \(bind: now - idleLimit.milliseconds)")
                .run()
            try await db.insert(into: "console_sessions")
                .columns("id", "secret_hash", "token_id", "created_at", "last_seen_at", "expires_at")
                .values(
                    SQLBind(credential.id), SQLBind(credential.secretHash), SQLBind(token.id), SQLBind(now), SQLBind(now),
                    SQLBind(now + lifetime.milliseconds)
                )
                .run()
        }
        return credential
    }

    /// The live session `credential` opens: its secret matches, it has not expired or idled out, and its admin token
    /// is not revoked. Marks it and its admin token used (at most once a minute: a write per page view would be
    /// needless), so the token's `lastUsedAt` tells console use too.
    func authenticate(_ credential: ConsoleCredential) async throws -> ConsoleSession? {
        guard
            let row = try await database.raw(
                """
                SELECT s.secret_hash, s.last_seen_at, s.expires_at, t.id, t.name, t.created_at, t.last_used_at, t.revoked_at
                FROM console_sessions s JOIN admin_tokens t ON t.id = s.token_id WHERE s.id = \(bind: credential.id)
                """
            ).first()
        else {
            _ = constantTimeEquals(Array(credential.secretHash.utf8), Array(sha256Hex("").utf8))  // the same work either way
            return nil
        }
        let matches = constantTimeEquals(Array(credential.secretHash.utf8), Array(try row.decode(column: "secret_hash", as: String.self).utf8))
        let now = EpochMillis.now
        let lastSeen = try row.decode(column: "last_seen_at", as: Int64.self)
        let expiresAt = try row.decode(column: "expires_at", as: Int64.self)
        let token = try AdminTokenSQLRepository.token(row)
        guard matches, token.isActive, now < expiresAt, now - lastSeen < idleLimit.milliseconds else { return nil }
        if now - lastSeen >= 60_000 {
            try await database.transaction { db in
                try await db.raw("UPDATE console_sessions SET last_seen_at = \(bind: now) WHERE id = \(bind: credential.id)").run()
                try await db.raw("UPDATE admin_tokens SET last_used_at = \(bind: now) WHERE id = \(bind: token.id)").run()
            }
        }
        return ConsoleSession(id: credential.id, token: token, credential: credential)
    }

    /// Ends a session (signing out).
    func close(_ session: ConsoleSession) async throws {
        try await database.raw("DELETE FROM console_sessions WHERE id = \(bind: session.id)").run()
    }
}
