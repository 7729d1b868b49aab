import Logging

/// The bootstrap of an empty store: once migrations are done, the store's first admin token is created and
/// announced (printed once; only its hash is kept), so a new operator can use the admin API at all.
///
/// Several instances starting together on one empty store create exactly one: ``AdminTokenRepository/createFirst(name:)``
/// counts and inserts in one transaction under a lock.
struct FirstAdminToken: Sendable {
    let tokens: any AdminTokenRepository
    /// Receives the new token's plaintext, the only time it exists.
    let announce: @Sendable (AdminCredential) -> Void
    let logger: Logger

    /// Creates and announces the first admin token when the store has none.
    func createIfNone() async throws {
        guard try await tokens.count() == 0, let (token, credential) = try await tokens.createFirst(name: "bootstrap") else { return }
        logger.notice("Created the first admin token", metadata: ["token.id": "\(token.id)"])
        announce(credential)
    }
}
