import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import SQLKit
import Testing

@testable import KizunaServer

/// The admin console over HTTP: signing in with an admin token leaves the browser a session and never the token;
/// sessions end at sign-out, expiry, idleness and the token's revocation; every write needs the session's CSRF token and
/// this site's origin; pages load nothing from elsewhere and need no script.
@Suite("Admin console: sessions and safety")
struct ConsoleTests {
    @Test(arguments: TestBackend.available)
    func signingInLeavesASessionCookieNeverTheToken(_ backend: TestBackend) async throws {
        try await withTestServer(backend) { server in
            var browser = ConsoleClient(server)
            let home = try await browser.get("/console")
            #expect(home.status == .seeOther && home.headers[.location] == "/console/sign-in")
            let page = try await browser.get("/console/sign-in")
            #expect(page.status == .ok && page.text.contains(#"<input id="token" name="token" type="password""#))

            // A wrong token is refused at its field, and what was typed is not shown again.
            let wrong = "kza_000000000000_\(String(repeating: "x", count: 43))"
            let refused = try await browser.post("/console/sign-in", ["token": wrong])
            #expect(refused.status == .unauthorized && refused.headers[values: .setCookie].isEmpty)
            #expect(refused.text.contains(#"aria-invalid="true""#) && refused.text.contains("not valid or has been revoked"))
            #expect(!refused.text.contains(wrong))

            let signedIn = try await browser.post("/console/sign-in", ["token": server.adminToken])
            #expect(signedIn.status == .seeOther && signedIn.headers[.location] == "/console")
            let (name, value, attributes) = AccountsTests.parseCookie(try #require(signedIn.headers[values: .setCookie].first))
            // Loopback over plain HTTP: the development cookie, as for the account pages (no Secure, no __Host-).
            #expect(name == "kizuna_console" && value.hasPrefix("kzc_") && !value.contains(server.adminToken))
            #expect(attributes == ["httponly": "", "samesite": "Strict", "path": "/", "max-age": "28800"])
            try await browser.signIn()

            // Only the secret's hash is stored.
            let secret = String(value.dropFirst("kzc_".count + 16 + 1))  // kzc_<id>_<secret>; the secret may hold "_" too
            let rows = try await server.database.raw("SELECT secret_hash FROM console_sessions").all()
            #expect(rows.count == 2)
            for row in rows { #expect(try row.decode(column: "secret_hash", as: String.self) != secret) }
            let hashes = try rows.map { try $0.decode(column: "secret_hash", as: String.self) }
            #expect(hashes.contains(sha256Hex(secret)))

            // The pages: the console's own stylesheet only, no script, never framed, never cached, no token.
            let apps = try await browser.get("/console/apps")
            #expect(apps.status == .ok && apps.text.contains(#"<h1>Apps</h1>"#) && ConsoleClient.csrf(in: apps.text) != nil)
            #expect(apps.headers[.contentSecurityPolicy] == "default-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
            #expect(apps.headers[.cacheControl] == "no-store" && apps.headers[.xContentTypeOptions] == "nosniff")
            #expect(!apps.text.contains("<script") && !apps.text.contains(" style=") && !apps.text.contains(server.adminToken))
            #expect(!apps.text.contains("http://") && !apps.text.contains("https://"))
            let css = try await browser.get("/console/console.css")
            #expect(css.status == .ok && css.headers[.contentType] == "text/css; charset=utf-8" && css.text.contains("prefers-color-scheme:dark"))
        }
    }

    @Test func overHTTPSTheCookieIsHostPrefixedAndSecure() async throws {
        try await withTestServer(.sqlite, configure: { $0.web = WebSettings(cookieMode: .secure) }) { server in
            let browser = ConsoleClient(server)
            let signedIn = try await browser.post("/console/sign-in", ["token": server.adminToken])
            let (name, _, attributes) = AccountsTests.parseCookie(try #require(signedIn.headers[values: .setCookie].first))
            #expect(name == "__Host-kizuna_console")
            #expect(attributes == ["secure": "", "httponly": "", "samesite": "Strict", "path": "/", "max-age": "28800"])
        }
    }

    /// Failed sign-ins count against the client's address, as account sign-ins do: past the allowance even the right
    /// token waits, and the answer says how long.
    @Test func failedSignInsFromOneAddressWait() async throws {
        try await withTestServer(.sqlite, configure: { $0.signInThrottle = SignInThrottlePolicy(addressAllowance: 3, firstLock: .seconds(30)) }) {
            server in
            var browser = ConsoleClient(server)
            for attempt in 1...3 {
                let refused = try await browser.post("/console/sign-in", ["token": "kza_not-a-token-\(attempt)"])
                #expect(refused.status == .unauthorized && refused.text.contains("not valid"), "attempt \(attempt)")
            }
            for token in ["kza_not-a-token-4", server.adminToken] {
                let locked = try await browser.post("/console/sign-in", ["token": token])
                #expect(locked.status == .tooManyRequests && locked.text.contains("Too many failed sign-ins from this address"))
                #expect(locked.headers[values: .setCookie].isEmpty && !locked.text.contains(server.adminToken))
                let wait = try #require(locked.headers[.retryAfter].flatMap { Int($0) })
                #expect((1...30).contains(wait))
            }
            // The lock over (its row aged past it), the right token opens a session again.
            let keys = try await server.database.raw("SELECT key FROM sign_in_throttles").all().map { try $0.decode(column: "key", as: String.self) }
            #expect(keys.count == 1 && keys.allSatisfy { $0.hasPrefix("console:") }, "counted apart from account sign-ins: \(keys)")
            try await server.database.raw("UPDATE sign_in_throttles SET locked_until = 0").run()
            try await browser.signIn()
            #expect(try await browser.get("/console/apps").status == .ok)
        }
    }

    @Test func signingOutEndsTheSession() async throws {
        try await withTestServer(.sqlite) { server in
            var browser = ConsoleClient(server)
            try await browser.signIn()
            let csrf = try await browser.csrf()
            // Without the CSRF token, nothing happens.
            #expect(try await browser.post("/console/sign-out", [:]).status == .forbidden)
            #expect(try await browser.get("/console/apps").status == .ok)

            let out = try await browser.post("/console/sign-out", ["csrf": csrf])
            #expect(out.status == .seeOther && out.headers[.location] == "/console/sign-in?out=1")
            let (_, value, attributes) = AccountsTests.parseCookie(try #require(out.headers[values: .setCookie].first))
            #expect(value.isEmpty && attributes["max-age"] == "0")
            // The old cookie no longer opens anything, and says so.
            let after = try await browser.get("/console/apps")
            #expect(after.status == .seeOther && after.headers[.location] == "/console/sign-in?ended=1")
            let signInPage = try await browser.get("/console/sign-in?ended=1")
            #expect(signInPage.text.contains("Your console session has ended"))
            let rows = try await server.database.raw("SELECT id FROM console_sessions").all()
            #expect(rows.isEmpty)
        }
    }

    @Test(arguments: TestBackend.available)
    func aSessionEndsWithItsTokenItsLifetimeAndIdleness(_ backend: TestBackend) async throws {
        try await withTestServer(backend) { server in
            let tokens = AdminTokenSQLRepository(database: server.database)
            let (other, credential) = try await tokens.create(name: "console test")
            var revoked = ConsoleClient(server)
            try await revoked.signIn(with: credential.token)
            var expired = ConsoleClient(server)
            try await expired.signIn()
            var idle = ConsoleClient(server)
            try await idle.signIn()
            for browser in [revoked, expired, idle] { #expect(try await browser.get("/console/apps").status == .ok) }

            _ = try await tokens.revoke(id: other.id)
            try await Self.age(server, expired, column: "expires_at", by: 8 * 3600)
            try await Self.age(server, idle, column: "last_seen_at", by: 30 * 60)
            for browser in [revoked, expired, idle] {
                let page = try await browser.get("/console/apps")
                #expect(page.status == .seeOther && page.headers[.location] == "/console/sign-in?ended=1")
            }
        }
    }

    /// Moves `column` of `browser`'s session `seconds` into the past, as that much time passing would.
    static func age(_ server: TestServer, _ browser: ConsoleClient, column: String, by seconds: Int64) async throws {
        let value = try #require(browser.cookie?.split(separator: "=", maxSplits: 1).last)  // kizuna_console=kzc_<id>_<secret>
        let id = String(value.dropFirst("kzc_".count).prefix(16))
        try await server.database.raw(
            "UPDATE console_sessions SET \(unsafeRaw: column) = \(unsafeRaw: column) - \(bind: seconds * 1000) WHERE id = \(bind: id)"
        ).run()
    }

    @Test func everyWriteNeedsTheCSRFTokenAndThisOrigin() async throws {
        try await withTestServer(.sqlite) { server in
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            let before = try await server.send(.get, "/v1/admin/apps").decode(AppList.self)
            var browser = ConsoleClient(server)
            try await browser.signIn()
            let csrf = try await browser.csrf()
            let app = ["name": "Changed", "platform": "ios", "bundleId": "com.example.changed", "teamId": "ABCDE12345"]
            let writes: [(String, [String: String])] = [
                ("/console/apps", app.merging(["id": "forged"]) { $1 }),
                ("/console/apps/shop", app),
                ("/console/apps/shop/delete", ["confirm": "shop"]),
                ("/console/apps/shop/config", ["base": "0", "document": "{}", "message": "forged"]),
                ("/console/apps/shop/config/rollback", ["base": "0", "version": "1"]),
                ("/console/apps/shop/associated-domains", ["settings": "{}"]),
                ("/console/apps/shop/gate", ["base": "0", "document": "{}", "message": "forged"]),
                ("/console/apps/shop/gate/rollback", ["base": "0", "version": "1"]),
                ("/console/apps/shop/config/form", ["base": "0", "message": "forged", "p0-name": "forged", "p0-type": "string", "p0-default": "x"]),
                ("/console/apps/shop/gate/form", ["base": "0", "message": "forged", "minimumVersion": "9.0"]),
                ("/console/apps/shop/releases/block", ["version": "1.0", "block": "true", "base": "0"]),
                ("/console/apps/shop/data/Task/t1", ["_version": "1", "field-title": "forged"]),
                ("/console/apps/shop/api-keys", ["name": "forged", "expiresInDays": "30"]),
                ("/console/apps/shop/api-keys/key/revoke", [:]),
                ("/console/apps/shop/push", ["body": "forged", "targetKind": "all"]),
                ("/console/apps/shop/push/jobs/job/cancel", [:]),
                ("/console/users/usr_1/status", ["disabled": "true"]),
                ("/console/users/usr_1/password-reset", [:]),
                ("/console/users/usr_1/sessions/ses_1/end", [:]),
                ("/console/users/usr_1/groups", ["group": "forged"]),
                ("/console/users/usr_1/groups/remove", ["group": "forged"]),
                ("/console/users/usr_1/delete", ["confirm": "usr_1"]),
                ("/console/sign-out", [:]),
            ]
            for (path, fields) in writes {
                let missing = try await browser.post(path, fields)
                #expect(missing.status == .forbidden && missing.text.contains("out of date"), "\(path) without a CSRF token")
                let wrong = try await browser.post(path, fields.merging(["csrf": String(csrf.reversed())]) { $1 })
                #expect(wrong.status == .forbidden, "\(path) with a wrong CSRF token")
                let elsewhere = try await browser.post(path, fields.merging(["csrf": csrf]) { $1 }, origin: "https://evil.example")
                #expect(elsewhere.status == .forbidden && elsewhere.text.contains("own pages"), "\(path) from another origin")
                let stale = try await browser.post(
                    path, fields.merging(["csrf": csrf]) { $1 }, origin: .some(nil), headers: [.secFetchSite: "cross-site"])
                #expect(stale.status == .forbidden, "\(path) from another site without Origin")
            }
            // Another session's token is not this one's.
            var other = ConsoleClient(server)
            try await other.signIn()
            let theirs = try await other.csrf()
            #expect(theirs != csrf)
            #expect(try await browser.post("/console/apps/shop/delete", ["confirm": "shop", "csrf": theirs]).status == .forbidden)
            // Signing in from another site is refused too (login CSRF).
            #expect(
                try await ConsoleClient(server).post("/console/sign-in", ["token": server.adminToken], origin: "https://evil.example").status
                    == .forbidden)

            #expect(try await server.send(.get, "/v1/admin/apps").decode(AppList.self) == before, "nothing changed")
            #expect(try await server.send(.get, "/v1/admin/apps/shop/api-keys").decode(APIKeyList.self).keys.isEmpty)
            #expect(try await server.send(.get, "/v1/admin/apps/shop/push/jobs").decode(PushJobList.self).jobs.isEmpty)
            #expect(try await server.send(.get, "/v1/admin/apps/shop/gate").decode(PublishedDocument.self).version == 0)
            #expect(try await browser.get("/console/apps").status == .ok, "still signed in")
        }
    }

    /// Every page of every section: no script, no inline style, nothing from elsewhere, never the token.
    @Test func everyPageWorksWithoutScriptsAndShowsNoSecret() async throws {
        try await withTestServer(.sqlite) { server in
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            let account = try await AccountsTests.signUp(server, "mio@example.com").account
            var browser = ConsoleClient(server)
            try await browser.signIn()
            let app = "/console/apps/shop"
            let pages = [
                "/console/apps", app, "\(app)/config", "\(app)/config/simulate", "\(app)/config/form", "\(app)/gate/form", "\(app)/gate",
                "\(app)/gate/simulate", "\(app)/data",
                "\(app)/api-keys", "\(app)/push", "\(app)/releases", "\(app)/associated-domains", "/console/users",
                "/console/users/\(account.id)", "/console/health",
            ]
            for path in pages {
                let page = try await browser.get(path)
                #expect(page.status == .ok, "\(path): \(page.status)")
                #expect(!page.text.contains("<script") && !page.text.contains(" style="), "\(path)")
                #expect(page.text.range(of: #" on[a-z]+=""#, options: .regularExpression) == nil, "\(path): an event handler")
                #expect(page.text.range(of: #"(src|href|action)="(https?:)?//"#, options: .regularExpression) == nil, "\(path): loads from elsewhere")
                #expect(!page.text.contains(server.adminToken) && page.headers[.contentSecurityPolicy]?.hasPrefix("default-src 'self'") == true)
            }
        }
    }

    @Test func everyWordIsInEveryLanguage() {
        for table in [ConsoleText.english, ConsoleText.japanese] {
            #expect(Set(table.keys) == Set(ConsoleWord.allCases), "\(Set(ConsoleWord.allCases).subtracting(table.keys))")
        }
        #expect(ConsoleText(chosen: nil, preferred: ["ja-JP", "en"]).language == "ja")
        #expect(ConsoleText(chosen: "en", preferred: ["ja-JP"]).language == "en")
        #expect(ConsoleText(chosen: "fr", preferred: ["de"]).language == "en")
    }
}
