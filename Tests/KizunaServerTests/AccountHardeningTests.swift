import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KizunaCore
import NIOPosix
import SQLKit
import Testing

@testable import KizunaServer

/// The account holes an adversarial review found: open redirects, shared-address lockouts, refresh-token reuse,
/// password floods, and the small ones (field names, percent-encoded paths, unknown apps on devices).
@Suite("Account hardening")
struct AccountHardeningTests {
    // MARK: Open redirect

    /// `next` values a browser would resolve to another origin (or that hide controls from the check). Each is the
    /// value after the query or form decoding, as the server sees it.
    static let offsiteNext = [
        "/\t/evil.example", "/\n/evil.example", "/\r/evil.example", "\t//evil.example", "/\t\t/evil.example", "//evil.example",
        "///evil.example", "/\\evil.example", "\\/evil.example", "/\\/evil.example", "\\\\evil.example", "https://evil.example/",
        "http:evil.example", "javascript:alert(1)", "／／evil.example", "/／evil.example", "/\u{3000}/evil.example", " //evil.example",
        "/%09/evil.example", "/%2F/evil.example", "/%2f/evil.example", "/%5Cevil.example", "/%5c/evil.example", "%2F%2Fevil.example",
        "/a/%0D%0ALocation:%20//evil.example", "/\u{0}/evil.example", "/\u{7F}/evil.example", "evil.example", "",
        "/" + String(repeating: "a", count: 600),
    ]

    static let localNext = ["/account/change-password", "/account?tab=sessions#top", "/account/%E3%81%82"]

    @Test func offsiteNextIsRefusedThroughEveryEntryPoint() async throws {
        try await AccountsTests.withServer { server in
            let grant = try await AccountsTests.signUp(server, "mio@example.com")
            let bearer: HTTPFields = [.authorization: "Bearer \(grant.session.accessToken)"]
            for next in Self.offsiteNext {
                let query = try #require(next.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
                // The sign-in page does not carry it into the form…
                let page = try await server.send(.get, "/account/sign-in?next=\(query)", authorized: false)
                #expect(page.status == .ok && !page.text.contains(#"name="next""#), "page: \(next.debugDescription)")
                // …a posted form ignores it and lands on /account…
                let form = "identifier=mio%40example.com&password=\(AccountsTests.password.replacingOccurrences(of: " ", with: "+"))&next=\(query)"
                let signedIn = try await server.send(
                    .post, "/account/sign-in", headers: [.contentType: "application/x-www-form-urlencoded"], authorized: false, body: form)
                #expect(signedIn.status == .seeOther && signedIn.headers[.location] == "/account", "form: \(next.debugDescription)")
                // …and a handoff code refuses it outright.
                let body = String(decoding: try JSONEncoder().encode(["next": next]), as: UTF8.self)
                let handoff = try await server.send(.post, "/v1/me/handoff", json: body, headers: bearer)
                #expect(handoff.status == .badRequest && handoff.error?.field == "next", "handoff: \(next.debugDescription)")
            }
            for next in Self.localNext {
                let query = try #require(next.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
                let form = "identifier=mio%40example.com&password=\(AccountsTests.password.replacingOccurrences(of: " ", with: "+"))&next=\(query)"
                let signedIn = try await server.send(
                    .post, "/account/sign-in", headers: [.contentType: "application/x-www-form-urlencoded"], authorized: false, body: form)
                #expect(signedIn.headers[.location] == next)
                let body = String(decoding: try JSONEncoder().encode(["next": next]), as: UTF8.self)
                let code = try await server.send(.post, "/v1/me/handoff", json: body, headers: bearer).decode(HandoffCode.self)
                #expect(try await server.send(.get, code.url, authorized: false).headers[.location] == next)
            }
        }
    }

    // MARK: Shared addresses

    @Test func aTrustedDeviceAndASignedInSessionAreNotLockedOutByTheirAddress() async throws {
        let policy = SignInThrottlePolicy(accountAllowance: 3, addressAllowance: 3)
        try await AccountsTests.withServer(configure: { $0.signInThrottle = policy }) { server in
            let device = #"{"appId":"shop","installId":"phone-1"}"#
            let signUp = try await server.send(
                .post, "/v1/auth/sign-up", json: #"{"identifier":"mio","password":"\#(AccountsTests.password)","device":\#(device)}"#,
                authorized: false)
            let grant = try signUp.decode(SessionGrant.self)
            // The phone was given a device token, stored only as its hash.
            let trust = try #require(grant.trustToken)
            #expect(trust.hasPrefix("kzd_"))
            let stored = try await server.database.raw("SELECT token_hash FROM trusted_devices").all()
            #expect(try stored.map { try $0.decode(column: "token_hash", as: String.self) } == [SessionSecret(trust, purpose: .trust)?.hash])
            // Someone behind the same carrier NAT guesses at other accounts, and at mio's, until the address locks.
            for name in ["aki", "ren", "mio", "mio"] {
                _ = try await server.send(
                    .post, "/v1/auth/sign-in", json: #"{"identifier":"\#(name)","password":"guess guess guess"}"#, authorized: false)
            }
            let stranger = try await server.send(
                .post, "/v1/auth/sign-in", json: #"{"identifier":"mio","password":"\#(AccountsTests.password)"}"#, authorized: false)
            #expect(stranger.status == .tooManyRequests && stranger.headers[.retryAfter] != nil)
            // mio's phone presents its token: it is counted on its own and gets in, without a second token.
            let phone = try await server.send(
                .post, "/v1/auth/sign-in",
                json: #"{"identifier":"mio","password":"\#(AccountsTests.password)","device":\#(device),"trustToken":"\#(trust)"}"#, authorized: false
            )
            let phoneGrant = try phone.decode(SessionGrant.self)
            #expect(phone.status == .ok && phoneGrant.trustToken == nil)
            // Knowing the install id is not enough, and neither is a made-up token.
            for extra in ["", #","trustToken":"kzd_\#(String(repeating: "A", count: 43))""#] {
                let guessed = try await server.send(
                    .post, "/v1/auth/sign-in",
                    json: #"{"identifier":"mio","password":"\#(AccountsTests.password)","device":\#(device)\#(extra)}"#, authorized: false)
                #expect(guessed.status == .tooManyRequests)
            }
            // Guesses made with the token lock the token, not the others.
            for _ in 0..<3 {
                _ = try await server.send(
                    .post, "/v1/auth/sign-in", json: #"{"identifier":"mio","password":"guess guess guess","trustToken":"\#(trust)"}"#,
                    authorized: false)
            }
            let lockedToken = try await server.send(
                .post, "/v1/auth/sign-in", json: #"{"identifier":"mio","password":"\#(AccountsTests.password)","trustToken":"\#(trust)"}"#,
                authorized: false)
            #expect(lockedToken.status == .tooManyRequests)
            // The signed-in session changes its password although its address is locked.
            let bearer: HTTPFields = [.authorization: "Bearer \(grant.session.accessToken)"]
            let change = try await server.send(
                .post, "/v1/me/password", json: #"{"currentPassword":"\#(AccountsTests.password)","newPassword":"a brand new secret"}"#,
                headers: bearer)
            #expect(change.status == .noContent)
            // A stolen session still gets only a few guesses at the current password.
            var last: TestResponse?
            for _ in 0..<4 {
                last = try await server.send(
                    .post, "/v1/me/password", json: #"{"currentPassword":"wrong wrong wrong","newPassword":"another new secret"}"#, headers: bearer)
            }
            #expect(last?.status == .tooManyRequests)
            let deleteRefused = try await server.send(.delete, "/v1/me", json: #"{"password":"wrong wrong wrong"}"#, headers: bearer)
            #expect(deleteRefused.status == .tooManyRequests)
        }
    }

    @Test func aThrottledPasswordFormSaysWhenToRetry() async throws {
        try await AccountsTests.withServer { server in
            let grant = try await AccountsTests.signUp(server, "mio")
            let code = try await server.send(.post, "/v1/me/handoff", headers: [.authorization: "Bearer \(grant.session.accessToken)"])
                .decode(HandoffCode.self)
            let redeemed = try await server.send(.get, code.url, authorized: false)
            let (name, value, _) = AccountsTests.parseCookie(try #require(redeemed.headers[values: .setCookie].first))
            var last: TestResponse?
            for _ in 0..<6 {
                last = try await server.send(
                    .post, "/account/change-password",
                    headers: [.cookie: "\(name)=\(value)", .contentType: "application/x-www-form-urlencoded"], authorized: false,
                    body: "currentPassword=wrong+wrong+wrong&newPassword=another+good+phrase")
            }
            #expect(last?.status == .tooManyRequests && last?.headers[.contentType]?.hasPrefix("text/html") == true)
            #expect(last?.headers[.retryAfter].flatMap(Int.init).map { $0 > 0 } == true)
        }
    }

    @Test func aBrowserThatSignedInBeforeIsNotLockedOutByItsAddress() async throws {
        let policy = SignInThrottlePolicy(accountAllowance: 3, addressAllowance: 3)
        try await AccountsTests.withServer(configure: { $0.signInThrottle = policy }) { server in
            _ = try await AccountsTests.signUp(server, "mio")
            let form = "identifier=mio&password=\(AccountsTests.password.replacingOccurrences(of: " ", with: "+"))"
            let formHeaders: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
            // The first sign-in gives this browser a device cookie, HttpOnly and host-only.
            let first = try await server.send(.post, "/account/sign-in", headers: formHeaders, authorized: false, body: form)
            let cookies = first.headers[values: .setCookie].map(AccountsTests.parseCookie)
            let device = try #require(cookies.first { $0.0 == "kizuna_device" })
            #expect(device.1.hasPrefix("kzd_") && device.2["httponly"] != nil && device.2["domain"] == nil)
            let stored = try await server.database.raw("SELECT token_hash FROM trusted_devices").all()
                .map { try $0.decode(column: "token_hash", as: String.self) }
            #expect(stored.contains(try #require(SessionSecret(device.1, purpose: .trust)).hash))

            // Guessing from the same address locks it…
            for name in ["aki", "ren", "mio"] {
                _ = try await server.send(
                    .post, "/account/sign-in", headers: formHeaders, authorized: false, body: "identifier=\(name)&password=guess+guess+guess")
            }
            let stranger = try await server.send(.post, "/account/sign-in", headers: formHeaders, authorized: false, body: form)
            #expect(stranger.status == .tooManyRequests)
            // …but the browser that signed in before gets in, and is not given a second cookie.
            var known = formHeaders
            known[.cookie] = "kizuna_device=\(device.1)"
            let again = try await server.send(.post, "/account/sign-in", headers: known, authorized: false, body: form)
            #expect(again.status == .seeOther && !again.headers[values: .setCookie].contains { $0.hasPrefix("kizuna_device=") })
            // A made-up cookie is not trusted.
            known[.cookie] = "kizuna_device=kzd_\(String(repeating: "A", count: 43))"
            #expect(try await server.send(.post, "/account/sign-in", headers: known, authorized: false, body: form).status == .tooManyRequests)
        }
    }

    @Test func wrongPasswordErrorsNameTheRequestsOwnFields() async throws {
        try await AccountsTests.withServer { server in
            let grant = try await AccountsTests.signUp(server, "mio")
            let bearer: HTTPFields = [.authorization: "Bearer \(grant.session.accessToken)"]
            let delete = try await server.send(.delete, "/v1/me", json: #"{"password":"wrong wrong wrong"}"#, headers: bearer)
            #expect(delete.status == .unauthorized && delete.error?.field == "password")
            let change = try await server.send(
                .post, "/v1/me/password", json: #"{"currentPassword":"wrong wrong wrong","newPassword":"x"}"#, headers: bearer)
            #expect(change.error?.field == "currentPassword")
            let weak = try await server.send(
                .post, "/v1/me/password", json: #"{"currentPassword":"\#(AccountsTests.password)","newPassword":"short"}"#, headers: bearer)
            #expect(weak.status == .badRequest && weak.error?.details.allSatisfy { $0.field == "newPassword" } == true)
            let reset = try await server.send(.post, "/v1/admin/users/mio/password-reset").decode(PasswordResetGrant.self)
            let weakReset = try await server.send(
                .post, "/v1/auth/reset-password", json: #"{"token":"\#(reset.token)","newPassword":"short"}"#, authorized: false)
            #expect(weakReset.status == .badRequest && weakReset.error?.details.allSatisfy { $0.field == "newPassword" } == true)
        }
    }

    // MARK: Refresh-token reuse

    @Test(arguments: TestBackend.available)
    func anyEarlierRefreshTokenEndsTheSessionButALostAnswerIsSentAgain(_ backend: TestBackend) async throws {
        try await AccountsTests.withServer(backend) { server in
            func signIn(_ install: String) async throws -> SessionTokens {
                try await server.send(
                    .post, "/v1/auth/sign-in",
                    json: #"{"identifier":"mio","password":"\#(AccountsTests.password)","device":{"appId":"shop","installId":"\#(install)"}}"#,
                    authorized: false
                ).decode(SessionGrant.self).session
            }
            func refresh(_ token: String, install: String? = nil) async throws -> TestResponse {
                let installField = install.map { #","installId":"\#($0)""# } ?? ""
                return try await server.send(.post, "/v1/auth/refresh", json: #"{"refreshToken":"\#(token)"\#(installField)}"#, authorized: false)
            }
            func isLive(_ tokens: SessionTokens) async throws -> Bool {
                try await server.send(.get, "/v1/me", headers: [.authorization: "Bearer \(tokens.accessToken)"]).status == .ok
            }
            _ = try await AccountsTests.signUp(server, "mio")

            // (a) A token two rotations old, presented late, ends the session.
            let first = try await signIn("phone")
            let second = try await refresh(first.refreshToken, install: "phone").decode(SessionGrant.self).session
            let third = try await refresh(second.refreshToken, install: "phone").decode(SessionGrant.self).session
            #expect(try await isLive(third))
            let stale = try await refresh(first.refreshToken, install: "phone")
            #expect(stale.status == .unauthorized && stale.error?.code == .sessionExpired)
            #expect(try await isLive(third) == false)
            #expect(try await refresh(third.refreshToken, install: "phone").status == .unauthorized)

            // (b) The phone lost the answer and retries at once: the same pair again, and the session lives on.
            let train = try await signIn("phone")
            let answer = try await refresh(train.refreshToken, install: "phone").decode(SessionGrant.self).session
            let retry = try await refresh(train.refreshToken, install: "phone")
            #expect(retry.status == .ok)
            let again = try retry.decode(SessionGrant.self).session
            #expect(again.accessToken == answer.accessToken && again.refreshToken == answer.refreshToken && again.expiresAt == answer.expiresAt)
            #expect(try await isLive(again))
            // The answer is given again once: a second replay of the same token is a copy, and ends the session.
            let replay = try await refresh(train.refreshToken, install: "phone")
            let stillLive = try await isLive(again)
            #expect(replay.status == .unauthorized && !stillLive)

            // (c) The same retry from another install (or none) is a copy: the session ends.
            for install in ["laptop", nil] {
                let victim = try await signIn("phone")
                _ = try await refresh(victim.refreshToken, install: "phone")
                let copy = try await refresh(victim.refreshToken, install: install)
                #expect(copy.status == .unauthorized)
                #expect(try await server.database.raw("SELECT id FROM sessions WHERE id = \(bind: victim.sessionId)").all().isEmpty)
            }

            // (d) From the same install, but after the grace period: the session ends.
            let late = try await signIn("phone")
            let rotated = try await refresh(late.refreshToken, install: "phone").decode(SessionGrant.self).session
            try await server.database.raw("UPDATE sessions SET rotated_at = rotated_at - 31000 WHERE id = \(bind: late.sessionId)").run()
            #expect(try await refresh(late.refreshToken, install: "phone").status == .unauthorized)
            #expect(try await isLive(rotated) == false)

            // The stored grace answer is sealed: neither token appears in the store.
            let session = try await signIn("phone")
            let sealed = try await refresh(session.refreshToken, install: "phone").decode(SessionGrant.self).session
            let stored = try await server.database.raw("SELECT refresh_grace FROM sessions WHERE id = \(bind: session.sessionId)").first()?
                .decode(column: "refresh_grace", as: String.self)
            let grace = try #require(stored)
            #expect(!grace.contains(sealed.accessToken.dropFirst(4)) && !grace.contains(sealed.refreshToken.dropFirst(4)))
        }
    }

    @Test(arguments: TestBackend.available)
    func twoRefreshesRacingWithOneTokenGetOnePair(_ backend: TestBackend) async throws {
        try await AccountsTests.withServer(backend) { server in
            _ = try await AccountsTests.signUp(server, "mio")
            for _ in 0..<5 {
                let session = try await server.send(
                    .post, "/v1/auth/sign-in",
                    json: #"{"identifier":"mio","password":"\#(AccountsTests.password)","device":{"appId":"shop","installId":"phone"}}"#,
                    authorized: false
                ).decode(SessionGrant.self).session
                let body = #"{"refreshToken":"\#(session.refreshToken)","installId":"phone"}"#
                async let first = server.send(.post, "/v1/auth/refresh", json: body, authorized: false)
                async let second = server.send(.post, "/v1/auth/refresh", json: body, authorized: false)
                let (a, b) = try await (first, second)
                #expect(a.status == .ok && b.status == .ok)
                #expect(try a.decode(SessionGrant.self).session.accessToken == b.decode(SessionGrant.self).session.accessToken)
            }
        }
    }

    // MARK: Password-hashing flood

    @Test func passwordChecksPastTheLimitAreRefusedNotQueued() async throws {
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        let hasher = PasswordHasher(parameters: .init(logN: 10, r: 8, p: 1), maxPending: 1, pool: pool)
        // Occupy the pool's only thread until released, so the first hash waits in its queue.
        let blocker = ThreadBlocker()
        async let occupied: Void = pool.runIfActive { blocker.block() }
        await blocker.started()
        let first = Task { try await hasher.hash("first password") }
        while hasher.pendingCount < 1 { await Task.yield() }
        await #expect(throws: KizunaError.self) {
            do {
                _ = try await hasher.hash("second password")
            } catch let error as KizunaError {
                #expect(error.code == .unavailable && error.retryAfter == 1)
                throw error
            }
        }
        blocker.release()
        try await occupied
        #expect(try await first.value.hasPrefix("$scrypt$"))
        #expect(hasher.pendingCount == 0)
        _ = try await hasher.hash("third password")  // room again
        try await pool.shutdownGracefully()
    }

    @Test func aSaturatedHashPoolAnswers503WithRetryAfter() async throws {
        try await AccountsTests.withServer(configure: { $0.maxPendingPasswordChecks = 0 }) { server in
            let refused = try await server.send(
                .post, "/v1/auth/sign-in", json: #"{"identifier":"mio","password":"\#(AccountsTests.password)"}"#, authorized: false)
            #expect(refused.status == .serviceUnavailable && refused.error?.code == .unavailable && refused.headers[.retryAfter] == "1")
        }
    }

    // MARK: Small holes

    @Test func nonASCIIIdentifiersAreReachableThroughTheAdminAPI() async throws {
        try await AccountsTests.withServer { server in
            for identifier in ["josé@example.com", "山田@例え.jp"] {
                let account = try await AccountsTests.signUp(server, identifier).account
                let encoded = try #require(identifier.addingPercentEncoding(withAllowedCharacters: .alphanumerics))
                let found = try await server.send(.get, "/v1/admin/users/\(encoded)")
                #expect(found.status == .ok && (try? found.decode(UserRecord.self).id) == account.id, "\(identifier)")
            }
        }
    }

    @Test func aDeviceMustNameARegisteredApp() async throws {
        try await AccountsTests.withServer { server in
            let refused = try await server.send(
                .post, "/v1/auth/sign-up",
                json: #"{"identifier":"mio","password":"\#(AccountsTests.password)","device":{"appId":"no-such-app","installId":"i-1"}}"#,
                authorized: false)
            #expect(refused.status == .badRequest && refused.error?.field == "device.appId")
            let rows = try await server.database.raw("SELECT COUNT(*) AS n FROM user_devices").first()?.decode(column: "n", as: Int.self)
            let users = try await server.database.raw("SELECT COUNT(*) AS n FROM users").first()?.decode(column: "n", as: Int.self)
            #expect(rows == 0 && users == 0)
        }
    }

    @Test func signOutTakesAnEmptyObject() async throws {
        try await AccountsTests.withServer { server in
            let grant = try await AccountsTests.signUp(server, "mio")
            let signOut = try await server.send(
                .post, "/v1/auth/sign-out", json: "{}", headers: [.authorization: "Bearer \(grant.session.accessToken)"])
            #expect(signOut.status == .noContent)
        }
    }
}

/// Blocks a pool thread until released (for holding a thread pool busy in a test).
final class ThreadBlocker: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let (running, runningContinuation) = AsyncStream.makeStream(of: Void.self)

    /// Blocks the calling thread until ``release()``.
    func block() {
        runningContinuation.yield()
        semaphore.wait()
    }

    /// Returns once ``block()`` is running.
    func started() async {
        var iterator = running.makeAsyncIterator()
        _ = await iterator.next()
    }

    func release() { semaphore.signal() }
}
