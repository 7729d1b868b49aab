import Foundation
import KizunaCore
import SQLKit

/// The groups each account is in, for the data API's `allow: groups` rules. Operators set them; nothing a user
/// sends can change them.
package protocol UserGroupRepository: Sendable {
    /// The groups of `userId`, sorted.
    func groups(of userId: String) async throws -> [String]
    /// Adds `userId` to `group` (nothing changes when it is already in it).
    func add(_ userId: String, to group: String) async throws
    /// Removes `userId` from `group` (nothing changes when it is not in it).
    func remove(_ userId: String, from group: String) async throws
}

extension UserGroupRepository {
    /// Group names: 1 to 64 letters, digits, `-`, `_` and `.`, as they appear in `@auth(rules: [{allow: groups, groups: [...]}])`.
    static func validate(group: String) throws(KizunaError) {
        var report = ValidationReport()
        let format = Format(message: "use 1 to 64 letters, digits, '-', '_' and '.'") { name in
            !name.isEmpty && name.count <= 64 && name.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }
        }
        report.check(group, with: FieldValidator(field: "group", rules: [format]))
        try report.throwIfFailed("The group name")
    }
}

/// ``UserGroupRepository`` over SQLite or PostgreSQL.
package struct UserGroupSQLRepository: UserGroupRepository {
    let database: KizunaDatabase

    package init(database: KizunaDatabase) {
        self.database = database
    }

    package func groups(of userId: String) async throws -> [String] {
        try await database.select().column("group_name").from("user_groups").where("user_id", .equal, SQLBind(userId))
            .orderBy("group_name").all().map { try $0.decode(column: "group_name", as: String.self) }
    }

    package func add(_ userId: String, to group: String) async throws {
        try Self.validate(group: group)
        try await database.transaction { db in
            let existing = try await db.select().column("group_name").from("user_groups")
                .where("user_id", .equal, SQLBind(userId)).where("group_name", .equal, SQLBind(group)).first()
            guard existing == nil else { return }
            try await db.insert(into: "user_groups").columns("user_id", "group_name", "created_at")
                .values(SQLBind(userId), SQLBind(group), SQLBind(EpochMillis.now)).run()
        }
    }

    package func remove(_ userId: String, from group: String) async throws {
        try await database.transaction { db in
            try await db.delete(from: "user_groups").where("user_id", .equal, SQLBind(userId)).where("group_name", .equal, SQLBind(group)).run()
        }
    }
}
