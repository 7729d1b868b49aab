import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KizunaCore
import SQLKit
import Testing

@testable import KizunaServer

/// Accounts and sessions over real HTTP on loopback, on SQLite and PostgreSQL.
@Suite("Accounts and sessions")
struct AccountsTests {
    static let password = "correct horse battery"

    /// A server with a cheap password hash (the cost is measured in Benchmarks/, not here).
    static func withServer(
        _ backend: TestBackend = .sqlite, configure: @escaping @Sendable (inout KizunaConfiguration) -> Void = { _ in },
        _ body: @Sendable (TestServer) async throws -> Void
    ) async throws {
        try await withTestServer(
            backend,
            configure: { configuration in
                configuration.passwordParameters = .init(logN: 10, r: 8, p: 1)
                configure(&configuration)
            }
        ) { server in
            // Devices name a registered app.
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            try await body(server)
        }
    }

    @Test(arguments: TestBackend.available)
    func signUpSignInRefreshAndSignOut(_ backend: TestBackend) async throws {
        try await Self.withServer(backend) { server in
            let signUp = try await server.send(
                .post, "/v1/auth/sign-up",
                json: #"{"identifier":"Mio@Example.com","password":"\#(Self.password)","device":{"appId":"shop","installId":"i-1","name":"iPhone"}}"#,
                authorized: false)
            #expect(signUp.status == .created)
            #expect(signUp.headers[.cacheControl] == "no-store")
            let grant = try signUp.decode(SessionGrant.self)
            #expect(grant.account.identifier == "mio@example.com")
            #expect(grant.session.accessToken.hasPrefix("kzs_") && grant.session.accessToken.count == 47)
            #expect(grant.session.expiresAt > .now && grant.session.refreshExpiresAt > grant.session.expiresAt)

            // Only hashes are stored.
            let stored = try await server.database.raw("SELECT token_hash, refresh_hash FROM sessions").all()
            let text = try stored.map { try $0.decode(column: "token_hash", as: String.self) + $0.decode(column: "refresh_hash", as: String.self) }
            #expect(stored.count == 1 && !text[0].contains(grant.session.accessToken.dropFirst(4)))
            let tokenHash = try stored[0].decode(column: "token_hash", as: String.self)
            let refreshHash = try stored[0].decode(column: "refresh_hash", as: String.self)
            #expect(tokenHash == SessionSecret(grant.session.accessToken, purpose: .access)?.hash && tokenHash.count == 64)
            #expect(refreshHash == SessionSecret(grant.session.refreshToken, purpose: .refresh)?.hash)
            let hash = try await server.database.raw("SELECT password_hash FROM users").first()?.decode(column: "password_hash", as: String.self)
            #expect(hash?.hasPrefix("$scrypt$ln=10,r=8,p=1$") == true)

            let me = try await server.send(.get, "/v1/me", headers: [.authorization: "Bearer \(grant.session.accessToken)"])
            let meInfo = try me.decode(AccountInfo.self)
            #expect(me.status == .ok && meInfo == grant.account)

            let signIn = try await server.send(
                .post, "/v1/auth/sign-in", json: #"{"identifier":"ＭＩＯ@example.com","password":"\#(Self.password)"}"#, authorized: false)
            #expect(signIn.status == .ok)
            let second = try signIn.decode(SessionGrant.self)
            #expect(second.account.id == grant.account.id && second.session.sessionId != grant.session.sessionId)

            // Refresh rotates both tokens; the old access token stops working.
            let refreshed = try await server.send(
                .post, "/v1/auth/refresh", json: #"{"refreshToken":"\#(grant.session.refreshToken)"}"#, authorized: false)
            #expect(refreshed.status == .ok)
            let rotated = try refreshed.decode(SessionGrant.self).session
            #expect(rotated.sessionId == grant.session.sessionId && rotated.accessToken != grant.session.accessToken)
            #expect(rotated.refreshToken != grant.session.refreshToken)
            let old = try await server.send(.get, "/v1/me", headers: [.authorization: "Bearer \(grant.session.accessToken)"])
            #expect(old.status == .unauthorized && old.error?.code == .sessionExpired)
            #expect(try await server.send(.get, "/v1/me", headers: [.authorization: "Bearer \(rotated.accessToken)"]).status == .ok)

            // The session list names both, marking the caller's.
            let list = try await server.send(.get, "/v1/me/sessions", headers: [.authorization: "Bearer \(rotated.accessToken)"])
            let sessions = try list.decode(SessionList.self).sessions
            #expect(Set(sessions.map(\.id)) == [grant.session.sessionId, second.session.sessionId])
            #expect(sessions.first { $0.current }?.id == grant.session.sessionId)
            #expect(sessions.first { $0.current }?.name == "iPhone")

            // A refresh token used twice signs its session out: someone else holds a copy.
            let reused = try await server.send(
                .post, "/v1/auth/refresh", json: #"{"refreshToken":"\#(grant.session.refreshToken)"}"#, authorized: false)
            #expect(reused.status == .unauthorized && reused.error?.code == .sessionExpired)
            #expect(try await server.send(.get, "/v1/me", headers: [.authorization: "Bearer \(rotated.accessToken)"]).status == .unauthorized)

            // Sign out of one session, then everywhere.
            let third = try await Self.signIn(server, "mio@example.com")
            #expect(
                try await server.send(.post, "/v1/auth/sign-out", headers: [.authorization: "Bearer \(second.session.accessToken)"]).status
                    == .noContent)
            #expect(try await server.send(.get, "/v1/me", headers: [.authorization: "Bearer \(second.session.accessToken)"]).status == .unauthorized)
            let fourth = try await Self.signIn(server, "mio@example.com")
            let everywhere = try await server.send(
                .post, "/v1/auth/sign-out", json: #"{"everywhere":true}"#, headers: [.authorization: "Bearer \(third.session.accessToken)"])
            #expect(everywhere.status == .noContent)
            #expect(try await server.send(.get, "/v1/me", headers: [.authorization: "Bearer \(fourth.session.accessToken)"]).status == .unauthorized)
        }
    }

    @Test func weakPasswordListsEveryFailingRuleInTheReadersLanguage() async throws {
        try await Self.withServer { server in
            let response = try await server.send(
                .post, "/v1/auth/sign-up", json: #"{"identifier":"x","password":"aaaa"}"#, headers: [.acceptLanguage: "ja-JP, en;q=0.5"],
                authorized: false)
            #expect(response.status == .badRequest)
            let error = try #require(response.error)
            #expect(error.code == .validationFailed)
            #expect(error.details.map(\.code) == ["bad_username", "password_too_short", "password_repetitive"])
            #expect(error.details.map(\.field) == ["identifier", "password", "password"])
            #expect(error.details[1].message == "10文字以上にしてください")
            let english = try await server.send(.post, "/v1/auth/sign-up", json: #"{"identifier":"x","password":"aaaa"}"#, authorized: false)
            #expect(english.error?.details[1].message == "must be at least 10 characters")
        }
    }

    @Test(arguments: ["MIO@example.com", "ｍｉｏ＠ｅｘａｍｐｌｅ．ｃｏｍ", " mio@EXAMPLE.com "])
    func lookAlikeIdentifiersCannotRegisterTwice(_ lookAlike: String) async throws {
        try await Self.withServer { server in
            _ = try await Self.signUp(server, "mio@example.com")
            let again = try await server.send(
                .post, "/v1/auth/sign-up", json: #"{"identifier":"\#(lookAlike)","password":"\#(Self.password)"}"#, authorized: false)
            #expect(again.status == .conflict && again.error?.code == .conflict && again.error?.field == "identifier")
        }
    }

    @Test func wrongPasswordAndUnknownAccountGetTheSameAnswer() async throws {
        try await Self.withServer { server in
            _ = try await Self.signUp(server, "mio@example.com")
            let wrong = try await server.send(
                .post, "/v1/auth/sign-in", json: #"{"identifier":"mio@example.com","password":"not the password"}"#, authorized: false)
            let unknown = try await server.send(
                .post, "/v1/auth/sign-in", json: #"{"identifier":"nobody@example.com","password":"not the password"}"#, authorized: false)
            #expect(wrong.status == .unauthorized && unknown.status == .unauthorized)
            #expect(wrong.error == unknown.error && wrong.error?.code == .invalidCredentials)
        }
    }

    @Test(arguments: TestBackend.available)
    func repeatedFailuresLockTheAccountUntilTheLockEnds(_ backend: TestBackend) async throws {
        try await Self.withServer(backend, configure: { $0.signInThrottle = SignInThrottlePolicy(accountAllowance: 3, firstLock: .seconds(30)) }) {
            server in
            _ = try await Self.signUp(server, "mio@example.com")
            for _ in 0..<3 {
                let failed = try await server.send(
                    .post, "/v1/auth/sign-in", json: #"{"identifier":"mio@example.com","password":"guess guess guess"}"#, authorized: false)
                #expect(failed.status == .unauthorized)
            }
            // Locked: even the right password gets 429 with Retry-After.
            let locked = try await server.send(
                .post, "/v1/auth/sign-in", json: #"{"identifier":"MIO@example.com","password":"\#(Self.password)"}"#, authorized: false)
            #expect(locked.status == .tooManyRequests && locked.error?.code == .throttled)
            let retryAfter = try #require(locked.headers[.retryAfter].flatMap { Int($0) })
            #expect((1...30).contains(retryAfter) && locked.error?.retryAfter == retryAfter)

            // An unknown identifier locks exactly the same way.
            for _ in 0..<3 {
                _ = try await server.send(
                    .post, "/v1/auth/sign-in", json: #"{"identifier":"ghost","password":"guess guess guess"}"#, authorized: false)
            }
            let ghost = try await server.send(
                .post, "/v1/auth/sign-in", json: #"{"identifier":"ghost","password":"guess guess guess"}"#, authorized: false)
            #expect(ghost.status == .tooManyRequests)

            // The lock ends by itself: move its end into the past.
            try await server.database.raw("UPDATE sign_in_throttles SET locked_until = \(bind: EpochMillis.now - 1)").run()
            let after = try await server.send(
                .post, "/v1/auth/sign-in", json: #"{"identifier":"mio@example.com","password":"\#(Self.password)"}"#, authorized: false)
            #expect(after.status == .ok)
            // Success clears the account's count; one more failure does not lock it again.
            _ = try await server.send(
                .post, "/v1/auth/sign-in", json: #"{"identifier":"mio@example.com","password":"guess guess guess"}"#, authorized: false)
            #expect(try await Self.signIn(server, "mio@example.com").account.identifier == "mio@example.com")
        }
    }

    @Test func oneAddressGuessingManyAccountsIsLocked() async throws {
        try await Self.withServer(configure: { $0.signInThrottle = SignInThrottlePolicy(accountAllowance: 10, addressAllowance: 4) }) { server in
            for index in 0..<4 {
                let failed = try await server.send(
                    .post, "/v1/auth/sign-in", json: #"{"identifier":"user\#(index)","password":"guess guess guess"}"#, authorized: false)
                #expect(failed.status == .unauthorized)
            }
            let locked = try await server.send(
                .post, "/v1/auth/sign-in", json: #"{"identifier":"user9","password":"guess guess guess"}"#, authorized: false)
            #expect(locked.status == .tooManyRequests && locked.headers[.retryAfter] != nil)
        }
    }

    @Test func expiredSessionsAreRefused() async throws {
        try await Self.withServer { server in
            let grant = try await Self.signUp(server, "mio@example.com")
            try await server.database.raw("UPDATE sessions SET expires_at = \(bind: EpochMillis.now - 1)").run()
            let expired = try await server.send(.get, "/v1/me", headers: [.authorization: "Bearer \(grant.session.accessToken)"])
            #expect(expired.status == .unauthorized && expired.error?.code == .sessionExpired)
            #expect(expired.headers[.wwwAuthenticate]?.contains("invalid_token") == true)
            // The refresh token still works until its own expiry…
            let refreshed = try await server.send(
                .post, "/v1/auth/refresh", json: #"{"refreshToken":"\#(grant.session.refreshToken)"}"#, authorized: false)
            #expect(refreshed.status == .ok)
            // …and not after it.
            try await server.database.raw("UPDATE sessions SET refresh_expires_at = \(bind: EpochMillis.now - 1)").run()
            let late = try await server.send(
                .post, "/v1/auth/refresh", json: #"{"refreshToken":"\#(try refreshed.decode(SessionGrant.self).session.refreshToken)"}"#,
                authorized: false)
            #expect(late.status == .unauthorized && late.error?.code == .sessionExpired)
            let garbage = try await server.send(.get, "/v1/me", headers: [.authorization: "Bearer kzs_nope"])
            #expect(garbage.status == .unauthorized)
            let none = try await server.send(.get, "/v1/me", authorized: false)
            #expect(none.status == .unauthorized && none.error?.code == .unauthorized)
        }
    }

    @Test func handoffCodeSetsTheCookieOnceAndExpires() async throws {
        try await Self.withServer(configure: { $0.web = WebSettings(cookieMode: .secure) }) { server in
            let grant = try await Self.signUp(server, "mio@example.com")
            let bearer: HTTPFields = [.authorization: "Bearer \(grant.session.accessToken)"]
            let created = try await server.send(.post, "/v1/me/handoff", json: #"{"next":"/account/change-password"}"#, headers: bearer)
            #expect(created.status == .created)
            let handoff = try created.decode(HandoffCode.self)
            #expect(handoff.url == "/v1/session/handoff?code=\(handoff.code)")
            #expect(handoff.expiresAt.timeIntervalSinceNow <= 60)

            let redeemed = try await server.send(.get, handoff.url, authorized: false)
            #expect(redeemed.status == .seeOther && redeemed.headers[.location] == "/account/change-password")
            let setCookie = try #require(redeemed.headers[values: .setCookie].first)
            let (name, value, attributes) = Self.parseCookie(setCookie)
            #expect(name == "__Host-kizuna_session" && value.hasPrefix("kzs_"))
            #expect(attributes == ["secure": "", "httponly": "", "samesite": "Lax", "path": "/", "max-age": "1209600"])

            // The cookie is a session of the same account.
            let me = try await server.send(.get, "/v1/me", headers: [.cookie: "\(name)=\(value)"], authorized: false)
            #expect(try me.decode(AccountInfo.self).id == grant.account.id)

            // A body of the wrong shape is the client's mistake, named by path.
            let wrongType = try await server.send(.post, "/v1/me/handoff", json: #"{"next":5}"#, headers: bearer)
            #expect(wrongType.status == .badRequest && wrongType.error?.code == .badRequest && wrongType.error?.field == "$.next")

            // Single use.
            let reused = try await server.send(.get, handoff.url, authorized: false)
            #expect(reused.status == .badRequest && reused.headers[values: .setCookie].isEmpty && reused.text.contains("expired or was already used"))

            // Expired.
            let late = try await server.send(.post, "/v1/me/handoff", headers: bearer).decode(HandoffCode.self)
            try await server.database.raw("UPDATE one_time_codes SET expires_at = \(bind: EpochMillis.now - 1)").run()
            #expect(try await server.send(.get, late.url, authorized: false).status == .badRequest)

            // Dies with the app session that asked for it.
            let orphan = try await server.send(.post, "/v1/me/handoff", headers: bearer).decode(HandoffCode.self)
            _ = try await server.send(.post, "/v1/auth/sign-out", headers: bearer)
            #expect(try await server.send(.get, orphan.url, authorized: false).status == .badRequest)

            // Only same-origin paths.
            let other = try await Self.signIn(server, "mio@example.com")
            let offsite = try await server.send(
                .post, "/v1/me/handoff", json: #"{"next":"//evil.example/"}"#, headers: [.authorization: "Bearer \(other.session.accessToken)"])
            #expect(offsite.status == .badRequest && offsite.error?.field == "next")
        }
    }

    @Test func changePasswordKeepsThisSessionAndEndsTheOthers() async throws {
        try await Self.withServer { server in
            let first = try await Self.signUp(server, "mio@example.com")
            let second = try await Self.signIn(server, "mio@example.com")
            let bearer: HTTPFields = [.authorization: "Bearer \(first.session.accessToken)"]
            let wrong = try await server.send(
                .post, "/v1/me/password", json: #"{"currentPassword":"nope nope nope","newPassword":"another fine password"}"#, headers: bearer)
            #expect(wrong.status == .unauthorized && wrong.error?.code == .invalidCredentials && wrong.error?.field == "currentPassword")
            let weak = try await server.send(
                .post, "/v1/me/password", json: #"{"currentPassword":"\#(Self.password)","newPassword":"short"}"#, headers: bearer)
            #expect(weak.status == .badRequest && weak.error?.details.first?.code == "password_too_short")
            let changed = try await server.send(
                .post, "/v1/me/password", json: #"{"currentPassword":"\#(Self.password)","newPassword":"another fine password"}"#, headers: bearer)
            #expect(changed.status == .noContent)
            #expect(try await server.send(.get, "/v1/me", headers: bearer).status == .ok)
            #expect(try await server.send(.get, "/v1/me", headers: [.authorization: "Bearer \(second.session.accessToken)"]).status == .unauthorized)
            #expect(try await Self.signIn(server, "mio@example.com", password: "another fine password").account.id == first.account.id)
        }
    }

    @Test(arguments: TestBackend.available)
    func operatorResetTokenWorksOnce(_ backend: TestBackend) async throws {
        try await Self.withServer(backend) { server in
            let grant = try await Self.signUp(server, "mio@example.com")
            let reset = try await server.send(.post, "/v1/admin/users/mio@example.com/password-reset")
            #expect(reset.status == .created)
            let token = try reset.decode(PasswordResetGrant.self)
            #expect(token.token.hasPrefix("kzp_") && token.url == "/account/reset-password?token=\(token.token)")
            #expect(try await server.send(.post, "/v1/admin/users/mio@example.com/password-reset", authorized: false).status == .unauthorized)

            let weak = try await server.send(
                .post, "/v1/auth/reset-password", json: #"{"token":"\#(token.token)","newPassword":"mio@example.com!!"}"#, authorized: false)
            #expect(weak.error?.details.map(\.code) == ["password_contains_identifier"])
            let done = try await server.send(
                .post, "/v1/auth/reset-password", json: #"{"token":"\#(token.token)","newPassword":"a brand new secret"}"#, authorized: false)
            #expect(done.status == .noContent)
            let again = try await server.send(
                .post, "/v1/auth/reset-password", json: #"{"token":"\#(token.token)","newPassword":"yet another secret"}"#, authorized: false)
            #expect(again.status == .unauthorized && again.error?.field == "token")
            #expect(try await server.send(.get, "/v1/me", headers: [.authorization: "Bearer \(grant.session.accessToken)"]).status == .unauthorized)
            #expect(try await Self.signIn(server, "mio@example.com", password: "a brand new secret").account.id == grant.account.id)
        }
    }

    @Test(arguments: TestBackend.available)
    func deletingAnAccountRemovesItsSessionsAndDevices(_ backend: TestBackend) async throws {
        try await Self.withServer(backend) { server in
            let grant = try await server.send(
                .post, "/v1/auth/sign-up",
                json: #"{"identifier":"mio","password":"\#(Self.password)","device":{"appId":"shop","installId":"i-1"}}"#, authorized: false
            ).decode(SessionGrant.self)
            let keeper = try await Self.signUp(server, "sora")
            let bearer: HTTPFields = [.authorization: "Bearer \(grant.session.accessToken)"]
            _ = try await server.send(.post, "/v1/me/handoff", headers: bearer)
            let refused = try await server.send(.delete, "/v1/me", json: #"{"password":"wrong wrong wrong"}"#, headers: bearer)
            #expect(refused.status == .unauthorized)
            #expect(try await server.send(.delete, "/v1/me", json: #"{"password":"\#(Self.password)"}"#, headers: bearer).status == .noContent)
            for table in ["sessions", "user_devices", "one_time_codes"] {
                let rows = try await server.database.raw("SELECT COUNT(*) AS n FROM \(ident: table) WHERE user_id = \(bind: grant.account.id)")
                    .first()?.decode(column: "n", as: Int.self)
                #expect(rows == 0, "\(table)")
            }
            let users = try await server.database.raw("SELECT COUNT(*) AS n FROM users").first()?.decode(column: "n", as: Int.self)
            #expect(users == 1)
            #expect(try await server.send(.get, "/v1/me", headers: [.authorization: "Bearer \(keeper.session.accessToken)"]).status == .ok)
            let signIn = try await server.send(
                .post, "/v1/auth/sign-in", json: #"{"identifier":"mio","password":"\#(Self.password)"}"#, authorized: false)
            #expect(signIn.status == .unauthorized)
        }
    }

    @Test func operatorsListDisableEnableAndRemoveAccounts() async throws {
        try await Self.withServer { server in
            let mio = try await server.send(
                .post, "/v1/auth/sign-up",
                json: #"{"identifier":"mio@example.com","password":"\#(Self.password)","device":{"appId":"shop","installId":"i-1","name":"iPhone"}}"#,
                authorized: false
            ).decode(SessionGrant.self)
            for name in ["aki", "ren", "sora"] { _ = try await Self.signUp(server, name) }

            let page = try await server.send(.get, "/v1/admin/users?limit=2").decode(UserList.self)
            #expect(page.users.map(\.identifier) == ["aki", "mio@example.com"] && page.next == "mio@example.com")
            let rest = try await server.send(.get, "/v1/admin/users?limit=2&after=mio@example.com").decode(UserList.self)
            #expect(rest.users.map(\.identifier) == ["ren", "sora"] && rest.next == nil)
            #expect(try await server.send(.get, "/v1/admin/users?search=EXAMPLE").decode(UserList.self).users.count == 1)

            let shown = try await server.send(.get, "/v1/admin/users/Mio@Example.com").decode(UserRecord.self)
            #expect(shown.id == mio.account.id && shown.kind == .email && shown.activeSessions == 1 && shown.devices.map(\.name) == ["iPhone"])
            let byId = try await server.send(.get, "/v1/admin/users/\(mio.account.id)").text
            #expect(!shown.disabled && byId.contains(mio.account.id) && !byId.contains("scrypt"))

            let disabled = try await server.send(.patch, "/v1/admin/users/\(mio.account.id)", json: #"{"disabled":true}"#).decode(UserRecord.self)
            #expect(disabled.disabled && disabled.activeSessions == 0)
            #expect(try await server.send(.get, "/v1/me", headers: [.authorization: "Bearer \(mio.session.accessToken)"]).status == .unauthorized)
            let refused = try await server.send(
                .post, "/v1/auth/sign-in", json: #"{"identifier":"mio@example.com","password":"\#(Self.password)"}"#, authorized: false)
            #expect(refused.status == .forbidden && refused.error?.code == .accountDisabled)

            _ = try await server.send(.patch, "/v1/admin/users/\(mio.account.id)", json: #"{"disabled":false}"#)
            #expect(try await Self.signIn(server, "mio@example.com").account.id == mio.account.id)

            #expect(try await server.send(.delete, "/v1/admin/users/aki").status == .noContent)
            #expect(try await server.send(.get, "/v1/admin/users/aki").status == .notFound)
        }
    }

    @Test func oldHashesAreUpgradedAtTheNextSignIn() async throws {
        try await Self.withServer(configure: { $0.passwordParameters = .init(logN: 11, r: 8, p: 1) }) { server in
            let grant = try await Self.signUp(server, "mio@example.com")
            let old = try await PasswordHasher(parameters: .init(logN: 10, r: 8, p: 1)).hash(Self.password)
            try await server.database.raw("UPDATE users SET password_hash = \(bind: old)").run()
            #expect(try await Self.signIn(server, "mio@example.com").account.id == grant.account.id)
            let stored = try await server.database.raw("SELECT password_hash FROM users").first()?.decode(column: "password_hash", as: String.self)
            #expect(stored?.hasPrefix("$scrypt$ln=11,r=8,p=1$") == true && stored != old)
        }
    }

    // MARK: Helpers

    static func signUp(_ server: TestServer, _ identifier: String) async throws -> SessionGrant {
        let response = try await server.send(
            .post, "/v1/auth/sign-up", json: #"{"identifier":"\#(identifier)","password":"\#(password)"}"#, authorized: false)
        #expect(response.status == .created)
        return try response.decode(SessionGrant.self)
    }

    static func signIn(_ server: TestServer, _ identifier: String, password: String = password) async throws -> SessionGrant {
        let response = try await server.send(
            .post, "/v1/auth/sign-in", json: #"{"identifier":"\#(identifier)","password":"\#(password)"}"#, authorized: false)
        #expect(response.status == .ok)
        return try response.decode(SessionGrant.self)
    }

    /// A `Set-Cookie` value as name, value and attributes (names lower-cased).
    static func parseCookie(_ header: String) -> (String, String, [String: String]) {
        let parts = header.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        let pair = parts[0].split(separator: "=", maxSplits: 1).map(String.init)
        var attributes: [String: String] = [:]
        for part in parts.dropFirst() {
            let item = part.split(separator: "=", maxSplits: 1).map(String.init)
            attributes[item[0].lowercased()] = item.count > 1 ? item[1] : ""
        }
        return (pair[0], pair.count > 1 ? pair[1] : "", attributes)
    }
}
