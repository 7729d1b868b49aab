import Crypto
import Foundation
import KizunaCore
import SQLKit

/// An app's APNs credentials in the clear, as the sender needs them: never answered by any route.
struct APNsCredentials: Sendable, Hashable {
    let keyId: String
    let teamId: String
    let topic: String
    let environment: APNsEnvironment?
    /// The `.p8` PEM.
    let privateKey: String
    /// Changes when the key does: cached provider tokens are keyed by it.
    let keyFingerprint: String
}

/// The apps' APNs signing keys (`push_credentials`, migration 9), sealed at rest under the server's ``SecretKey``
/// and bound to their app, so neither a copy of the store nor a row moved to another app yields a usable key.
struct PushCredentialStore: Sendable {
    let database: KizunaDatabase
    let secretKey: SecretKeySource

    /// Checks and stores `upload` as `app`'s credentials, replacing any before; `topic` defaults to `bundleId`.
    func set(app: String, bundleId: String, _ upload: PushCredentialsUpload) async throws -> PushCredentialsInfo {
        let key = try Self.parseKey(upload.p8)
        try Self.checkIdentifier(upload.keyId, "keyId")
        try Self.checkIdentifier(upload.teamId, "teamId")
        let topic = upload.topic ?? bundleId
        guard !topic.isEmpty, topic.count <= 255, !topic.contains(where: { $0.isWhitespace }) else {
            throw KizunaError(.validationFailed, "topic must be a bundle id (1 to 255 characters, no spaces).", field: "topic")
        }
        let sealed = try secretKey.key().seal(Data(key.pemRepresentation.utf8), context: Self.context(app))
        let info = PushCredentialsInfo(
            keyId: upload.keyId, teamId: upload.teamId, topic: topic, environment: upload.environment, keyFingerprint: Self.fingerprint(key),
            updatedAt: EpochMillis.now)
        // Every write goes through a transaction: on SQLite that is where this process's writers take turns.
        try await database.transaction { db in
            try await db.raw(
                """
                INSERT INTO push_credentials (app_id, key_id, team_id, topic, environment, sealed_key, key_fingerprint, updated_at)
                VALUES (\(bind: app), \(bind: info.keyId), \(bind: info.teamId), \(bind: info.topic), \(bind: info.environment?.rawValue), \
                \(bind: sealed.base64EncodedString()), \(bind: info.keyFingerprint), \(bind: info.updatedAt))
                ON CONFLICT (app_id) DO UPDATE SET key_id = excluded.key_id, team_id = excluded.team_id, topic = excluded.topic,
                    environment = excluded.environment, sealed_key = excluded.sealed_key, key_fingerprint = excluded.key_fingerprint,
                    updated_at = excluded.updated_at
                """
            ).run()
        }
        return info
    }

    /// What is set for `app`, without the key.
    func info(app: String) async throws -> PushCredentialsInfo? {
        guard let row = try await database.raw("SELECT * FROM push_credentials WHERE app_id = \(bind: app)").first() else { return nil }
        return try Self.info(row)
    }

    /// Removes `app`'s credentials. - Returns: Whether there were any.
    func delete(app: String) async throws -> Bool {
        try await database.transaction { db in
            try await !db.raw("DELETE FROM push_credentials WHERE app_id = \(bind: app) RETURNING app_id").all().isEmpty
        }
    }

    /// `app`'s credentials with the key opened, for the sender.
    func credentials(app: String) async throws -> APNsCredentials? {
        guard let row = try await database.raw("SELECT * FROM push_credentials WHERE app_id = \(bind: app)").first() else { return nil }
        let info = try Self.info(row)
        guard let sealed = Data(base64Encoded: try row.decode(column: "sealed_key", as: String.self)) else {
            throw KizunaError(.internalError, "The stored APNs key of app '\(app)' is not base64.")
        }
        let pem = String(decoding: try secretKey.key().open(sealed, context: Self.context(app)), as: UTF8.self)
        return APNsCredentials(
            keyId: info.keyId, teamId: info.teamId, topic: info.topic, environment: info.environment, privateKey: pem,
            keyFingerprint: info.keyFingerprint)
    }

    /// The provider tokens every instance shares (`push_provider_tokens`), sealed like the keys.
    var sharedTokens: APNsProviderTokens.Shared {
        let (database, secretKey) = (database, secretKey)
        return APNsProviderTokens.Shared(
            load: { key in
                guard
                    let row = try await database.raw(
                        "SELECT sealed_token, issued_at FROM push_provider_tokens WHERE key_fingerprint = \(bind: key)"
                    ).first(), let sealed = Data(base64Encoded: try row.decode(column: "sealed_token", as: String.self))
                else { return nil }
                let token = String(decoding: try secretKey.key().open(sealed, context: "provider-token:\(key)"), as: UTF8.self)
                return (token, EpochMillis.date(try row.decode(column: "issued_at", as: Int64.self)))
            },
            store: { key, token, issuedAt, replacing in
                let sealed = try secretKey.key().seal(Data(token.utf8), context: "provider-token:\(key)").base64EncodedString()
                let stored: [any SQLRow]
                if let replacing {
                    stored = try await database.transaction { db in
                        try await db.raw(
                            """
                            UPDATE push_provider_tokens SET sealed_token = \(bind: sealed), issued_at = \(bind: EpochMillis.from(issuedAt))
                            WHERE key_fingerprint = \(bind: key) AND issued_at = \(bind: EpochMillis.from(replacing)) RETURNING key_fingerprint
                            """
                        ).all()
                    }
                } else {
                    stored = try await database.transaction { db in
                        try await db.raw(
                            """
                            INSERT INTO push_provider_tokens (key_fingerprint, sealed_token, issued_at)
                            VALUES (\(bind: key), \(bind: sealed), \(bind: EpochMillis.from(issuedAt)))
                            ON CONFLICT (key_fingerprint) DO NOTHING RETURNING key_fingerprint
                            """
                        ).all()
                    }
                }
                return !stored.isEmpty
            },
            drop: { key, issuedAt in
                try await database.transaction { db in
                    try await db.raw(
                        """
                        DELETE FROM push_provider_tokens WHERE key_fingerprint = \(bind: key) AND issued_at = \(bind: EpochMillis.from(issuedAt))
                        """
                    ).run()
                }
            })
    }

    private static func info(_ row: any SQLRow) throws -> PushCredentialsInfo {
        PushCredentialsInfo(
            keyId: try row.decode(column: "key_id", as: String.self), teamId: try row.decode(column: "team_id", as: String.self),
            topic: try row.decode(column: "topic", as: String.self),
            environment: try row.decode(column: "environment", as: String?.self).flatMap(APNsEnvironment.init(rawValue:)),
            keyFingerprint: try row.decode(column: "key_fingerprint", as: String.self),
            updatedAt: try row.decode(column: "updated_at", as: Int64.self))
    }

    private static func context(_ app: String) -> String { "push-credentials:\(app)" }

    /// The `.p8` as a P-256 signing key.
    static func parseKey(_ pem: String) throws(KizunaError) -> P256.Signing.PrivateKey {
        do {
            return try P256.Signing.PrivateKey(pemRepresentation: pem.trimmingCharacters(in: .whitespacesAndNewlines))
        } catch {
            throw KizunaError(
                .validationFailed, "p8 must be the text of the .p8 file Apple gave for the key (-----BEGIN PRIVATE KEY-----, a P-256 key).",
                field: "p8")
        }
    }

    static func fingerprint(_ key: P256.Signing.PrivateKey) -> String {
        hex(SHA256.hash(data: key.publicKey.derRepresentation))
    }

    /// Apple's key and team ids: 10 characters, capital letters and digits.
    private static func checkIdentifier(_ value: String, _ field: String) throws(KizunaError) {
        guard value.count == 10, value.allSatisfy({ ($0.isASCII && $0.isUppercase) || ("0"..."9").contains($0) }) else {
            throw KizunaError(
                .validationFailed, "\(field) must be Apple's 10-character id (capital letters and digits), such as ABC123DEFG.", field: field)
        }
    }
}
