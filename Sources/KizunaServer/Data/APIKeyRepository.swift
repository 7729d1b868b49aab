import Foundation
import KizunaCore
import SQLKit

/// Stores each app's API keys: the callers `allow: public` rules let in.
package protocol APIKeyRepository: Sendable {
    /// Creates a key; its secret is in the answer only. - Throws: `validation_failed`, `not_found` for the app.
    func create(app: String, _ key: NewAPIKey) async throws -> CreatedAPIKey
    /// The app's keys, newest first, revoked and expired ones included.
    func list(app: String) async throws -> [APIKeyInfo]
    /// Revokes a key at once. - Throws: `not_found` when the app has no such key.
    func revoke(app: String, id: String) async throws -> APIKeyInfo
    /// The key `text` names, when it belongs to `app` and is live.
    /// - Throws: `unauthorized` for anything else than one of the app's keys, `api_key_expired`, `api_key_revoked`.
    func authenticate(app: String, key text: String) async throws -> APIKeyInfo
}

/// ``APIKeyRepository`` over SQLite or PostgreSQL. Keys are `kzk_<id>_<secret>` with 256 random bits of secret, of
/// which only a SHA-256 hash is stored and compared in constant time.
package struct APIKeySQLRepository: APIKeyRepository {
    let database: KizunaDatabase

    package init(database: KizunaDatabase) {
        self.database = database
    }

    static let prefix = "kzk_"
    private static let columns = ["id", "name", "created_at", "expires_at", "revoked_at", "last_used_at"]

    package func create(app: String, _ request: NewAPIKey) async throws -> CreatedAPIKey {
        let name = (request.name ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
        var report = ValidationReport()
        report.check(name, with: FieldValidator(field: "$.name", rules: [Length(0...100)]))
        report.check(request.expiresInDays, with: FieldValidator(field: "$.expiresInDays", rules: [InRange(1...365)]))
        try report.throwIfFailed("The API key")
        let id = hex(randomBytes(6))
        let secret = base64URL(randomBytes(32))
        let now = EpochMillis.now
        let expires = now + Int64(request.expiresInDays) * 86_400_000
        try await database.transaction { db in
            guard try await db.select().column("id").from("apps").where("id", .equal, SQLBind(app)).first() != nil else {
                throw KizunaError.noSuchApp(app)
            }
            try await db.insert(into: "api_keys")
                .columns("id", "app_id", "name", "secret_hash", "created_at", "expires_at")
                .values(SQLBind(id), SQLBind(app), SQLBind(name), SQLBind(sha256Hex(secret)), SQLBind(now), SQLBind(expires))
                .run()
        }
        let info = APIKeyInfo(id: id, name: name, createdAt: EpochMillis.date(now), expiresAt: EpochMillis.date(expires))
        return CreatedAPIKey(key: "\(Self.prefix)\(id)_\(secret)", info: info)
    }

    package func list(app: String) async throws -> [APIKeyInfo] {
        try await database.select().columns(Self.columns).from("api_keys").where("app_id", .equal, SQLBind(app))
            .orderBy("created_at", .descending).orderBy("id")
            .all().map(Self.info)
    }

    package func revoke(app: String, id: String) async throws -> APIKeyInfo {
        try await database.transaction { db in
            try await db.update("api_keys").set("revoked_at", to: SQLBind(EpochMillis.now))
                .where("app_id", .equal, SQLBind(app)).where("id", .equal, SQLBind(id)).where("revoked_at", .is, SQLLiteral.null)
                .run()
            guard
                let row = try await db.select().columns(Self.columns).from("api_keys")
                    .where("app_id", .equal, SQLBind(app)).where("id", .equal, SQLBind(id)).first()
            else {
                throw KizunaError(.notFound, "App '\(app)' has no API key '\(id)'; `kizuna app key list` shows its keys.", field: "id")
            }
            return try Self.info(row)
        }
    }

    package func authenticate(app: String, key text: String) async throws -> APIKeyInfo {
        let refused = KizunaError(.unauthorized, "The API key is not one of this app's keys.")
        guard text.hasPrefix(Self.prefix) else { throw refused }
        let rest = text.dropFirst(Self.prefix.count)
        guard let separator = rest.firstIndex(of: "_") else { throw refused }
        let id = String(rest[..<separator])
        let secret = String(rest[rest.index(after: separator)...])
        guard id.count == 12, secret.count >= 32,
            let row = try await database.select().columns(Self.columns + ["secret_hash"]).from("api_keys")
                .where("app_id", .equal, SQLBind(app)).where("id", .equal, SQLBind(id)).first(),
            constantTimeEquals(Array(sha256Hex(secret).utf8), Array(try row.decode(column: "secret_hash", as: String.self).utf8))
        else { throw refused }
        let info = try Self.info(row)
        if info.revokedAt != nil { throw KizunaError(.apiKeyRevoked, "The API key was revoked; ask for a new one.") }
        if info.expiresAt <= Date() {
            throw KizunaError(.apiKeyExpired, "The API key expired on \(info.expiresAt.formatted(.iso8601)); create a new one.")
        }
        return info
    }

    private static func info(_ row: any SQLRow) throws -> APIKeyInfo {
        APIKeyInfo(
            id: try row.decode(column: "id", as: String.self),
            name: try row.decode(column: "name", as: String.self),
            createdAt: EpochMillis.date(try row.decode(column: "created_at", as: Int64.self)),
            expiresAt: EpochMillis.date(try row.decode(column: "expires_at", as: Int64.self)),
            revokedAt: try row.decode(column: "revoked_at", as: Int64?.self).map(EpochMillis.date),
            lastUsedAt: try row.decode(column: "last_used_at", as: Int64?.self).map(EpochMillis.date))
    }
}
