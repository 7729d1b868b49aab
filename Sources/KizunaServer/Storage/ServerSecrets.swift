import Crypto
import Foundation
import KizunaCore
import SQLKit
import Synchronization

/// Keys the server keeps in its own store, so every instance sharing the store uses the same one: made on first
/// use (the first instance to ask inserts it; a racing one reads what won) and cached for the process's life.
///
/// They sign what the server hands out and reads back (the data API's page tokens), so a client cannot forge one.
/// They are not encrypted at rest: a copy of the store already holds everything such a token could reach, and every
/// request is authorized whatever token it carries.
package final class ServerSecrets: Sendable {
    private let database: KizunaDatabase
    private let cache = Mutex<[String: SymmetricKey]>([:])

    package init(database: KizunaDatabase) {
        self.database = database
    }

    /// The 256-bit key named `name`.
    package func key(_ name: String) async throws -> SymmetricKey {
        if let cached = cache.withLock({ $0[name] }) { return cached }
        let fresh = base64URL(randomBytes(32))
        try await database.raw(
            """
            INSERT INTO server_secrets (name, secret, created_at) VALUES (\(bind: name), \(bind: fresh), \(bind: EpochMillis.now))
            ON CONFLICT (name) DO NOTHING
            """
        ).run()
        guard let row = try await database.select().column("secret").from("server_secrets").where("name", .equal, SQLBind(name)).first(),
            let bytes = base64URLDecoded(try row.decode(column: "secret", as: String.self)), bytes.count == 32
        else { throw KizunaError(.internalError, "The server's '\(name)' key is missing or damaged in the store.") }
        let key = SymmetricKey(data: bytes)
        cache.withLock { $0[name] = key }
        return key
    }
}
