import SQLKit

/// Sessions that end before their time — signed out, signed out everywhere, ended by a password change or a reused
/// refresh token, or with their account disabled or deleted — are written to the `changes` log in the transaction that
/// ends them, as a change of kind `session` for the account. Every instance's ``ChangeFeed`` hears of it (on
/// PostgreSQL through LISTEN/NOTIFY), so the data API's WebSocket connections of that account re-check their session
/// at once and close with 4403 when it is over, wherever they are connected.
enum SessionEvents {
    /// The change kind.
    static let kind = "session"

    /// Records, inside the caller's transaction, that sessions of `userId` ended.
    static func ended(userId: String, on db: any SQLDatabase) async throws {
        try await ChangeLog.append(kind: kind, entityId: userId, version: 0, on: db)
    }
}
