import Foundation
import KizunaCore
import Logging

/// What operators do to accounts through the admin API: find, list, disable, enable.
extension AccountService {
    /// The account with `id`, or `nil`.
    func account(id: String) async throws -> AccountInfo? {
        try await repository.account(id: id)
    }

    /// The account an operator names by id (`usr_…`) or by identifier, or `nil`.
    func findUser(_ reference: String) async throws -> UserRecord? {
        if reference.hasPrefix("usr_") {
            return try await repository.user(id: reference, now: EpochMillis.now)
        }
        return try await repository.user(identifier: AccountIdentifier.normalize(reference), now: EpochMillis.now)
    }

    /// A page of accounts in identifier order, after `after`, optionally only identifiers containing `search`
    /// (normalised like identifiers, so case and width do not matter).
    func listUsers(after: String?, limit: Int, search: String?) async throws -> UserList {
        try await repository.users(after: after, limit: limit, containing: search.map(AccountIdentifier.normalize), now: EpochMillis.now)
    }

    /// Disables or enables an account; disabling signs out every session at once.
    func setDisabled(_ disabled: Bool, userId: String) async throws {
        try await repository.setDisabled(disabled, userId: userId, at: EpochMillis.now)
        logger.notice(disabled ? "Account disabled" : "Account enabled", metadata: ["user": "\(userId)"])
    }
}
