import Foundation
import KizunaCore
import SQLKit

/// Passwords and the one-time codes in `one_time_codes`: password-reset tokens and web-view handoff codes.
extension AccountSQLRepository {
    func passwordHash(userId: String) async throws -> String? {
        try await database.select().column("password_hash").from("users").where("id", .equal, SQLBind(userId)).first()
            .map { try $0.decode(column: "password_hash", as: String.self) }
    }

    func setPassword(userId: String, hash: String, at now: Int64, keepingSession: String?, consumingCode code: String?) async throws -> Bool {
        try await endingSessions { db -> Bool in
            if let code {
                // Consumed in the same transaction: a token redeemed twice at once sets the password only once.
                guard
                    try await db.select().column("code_hash").from("one_time_codes").where("code_hash", .equal, SQLBind(code)).for(.update).first()
                        != nil
                else { return false }
                try await db.delete(from: "one_time_codes").where("code_hash", .equal, SQLBind(code)).run()
            }
            try await db.update("users").set("password_hash", to: SQLBind(hash)).set("password_changed_at", to: SQLBind(now))
                .set("updated_at", to: SQLBind(now)).where("id", .equal, SQLBind(userId)).run()
            let others = db.delete(from: "sessions").where("user_id", .equal, SQLBind(userId))
            if let keepingSession { others.where("id", .notEqual, SQLBind(keepingSession)) }
            try await others.run()
            try await SessionEvents.ended(userId: userId, on: db)
            return true
        }
    }

    func resetCode(hash: String) async throws -> StoredResetCode? {
        try await database.select().columns("user_id", "expires_at").from("one_time_codes")
            .where("code_hash", .equal, SQLBind(hash)).where("purpose", .equal, SQLBind("password_reset")).first()
            .map { row in
                StoredResetCode(
                    userId: try row.decode(column: "user_id", as: String.self), expiresAt: try row.decode(column: "expires_at", as: Int64.self))
            }
    }

    func replaceResetCode(hash: String, userId: String, createdAt: Int64, expiresAt: Int64) async throws {
        try await database.transaction { db in
            try await db.delete(from: "one_time_codes").where("user_id", .equal, SQLBind(userId))
                .where("purpose", .equal, SQLBind("password_reset")).run()
            try await db.insert(into: "one_time_codes").columns("code_hash", "purpose", "user_id", "created_at", "expires_at")
                .values(SQLBind(hash), SQLBind("password_reset"), SQLBind(userId), SQLBind(createdAt), SQLBind(expiresAt)).run()
        }
    }

    // MARK: Web-view handoff

    func createHandoff(hash: String, userId: String, sessionId: String, next: String, createdAt: Int64, expiresAt: Int64) async throws {
        try await database.transaction { db in
            try await db.insert(into: "one_time_codes")
                .columns("code_hash", "purpose", "user_id", "session_id", "next_path", "created_at", "expires_at")
                .values(
                    SQLBind(hash), SQLBind("handoff"), SQLBind(userId), SQLBind(sessionId), SQLBind(next), SQLBind(createdAt), SQLBind(expiresAt)
                )
                .run()
        }
    }

    func redeemHandoff(hash: String, at now: Int64, session: NewSession) async throws -> HandoffRedemption? {
        try await database.transaction { db -> HandoffRedemption? in
            let row = try await db.select().columns("user_id", "session_id", "next_path", "expires_at").from("one_time_codes")
                .where("code_hash", .equal, SQLBind(hash)).where("purpose", .equal, SQLBind("handoff")).for(.update).first()
            guard let row else { return nil }
            // Deleted whatever follows: returning `nil` below still commits this.
            try await db.delete(from: "one_time_codes").where("code_hash", .equal, SQLBind(hash)).run()
            guard try row.decode(column: "expires_at", as: Int64.self) > now,
                let origin = try row.decode(column: "session_id", as: String?.self),
                let source = try await db.select().column("expires_at").column("refresh_expires_at").from("sessions")
                    .where("id", .equal, SQLBind(origin)).first(),
                try (source.decode(column: "refresh_expires_at", as: Int64?.self) ?? source.decode(column: "expires_at", as: Int64.self)) > now
            else { return nil }
            let userId = try row.decode(column: "user_id", as: String.self)
            guard
                try await db.select().column("id").from("users").where("id", .equal, SQLBind(userId))
                    .where(SQLColumn("disabled_at"), .is, SQLLiteral.null).first() != nil
            else { return nil }
            try await Self.insert(session, for: userId, db)
            return HandoffRedemption(next: try row.decode(column: "next_path", as: String?.self))
        }
    }
}
