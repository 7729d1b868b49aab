import KizunaCore

/// Stores admin tokens.
package protocol AdminTokenRepository: Sendable {
    /// Creates a token named `name` and returns it with its plaintext credential (shown once).
    func create(name: String) async throws -> (AdminToken, AdminCredential)
    /// Every token, newest first, revoked ones included.
    func list() async throws -> [AdminToken]
    /// Revokes a token. - Throws: `not_found` when there is no such token.
    func revoke(id: String) async throws -> AdminToken
    /// The active token this credential proves, recording its use; `nil` when it proves none.
    func authenticate(_ credential: AdminCredential) async throws -> AdminToken?
    /// How many tokens have ever been created (0 only on a fresh store).
    func count() async throws -> Int
    /// Creates the store's first token, only if it has none yet, atomically across every instance sharing the
    /// store: of several instances starting together on an empty store exactly one gets a token.
    /// - Returns: The new token and its credential, or `nil` when the store already had one.
    func createFirst(name: String) async throws -> (AdminToken, AdminCredential)?
}
