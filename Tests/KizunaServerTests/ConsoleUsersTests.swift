import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import Testing

@testable import KizunaServer

/// The console's Users section over HTTP: finding accounts page by page, an account's devices and groups, disabling
/// (which signs its sessions out) and enabling it, a reset link, and deleting it; all through the admin API.
@Suite("Admin console: users")
struct ConsoleUsersTests {
    @Test(arguments: TestBackend.available)
    func accountsAreFoundDisabledGroupedResetAndDeleted(_ backend: TestBackend) async throws {
        try await withTestServer(backend) { server in
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            let signUp = try await server.send(
                .post, "/v1/auth/sign-up",
                json:
                    #"{"identifier":"mio@example.com","password":"\#(AccountsTests.password)","device":{"appId":"shop","installId":"i-1","name":"Mio's <iPhone>"}}"#,
                authorized: false)
            #expect(signUp.status == .created)
            let grant = try signUp.decode(SessionGrant.self)
            for name in ["ren", "sora"] { _ = try await AccountsTests.signUp(server, name) }
            var browser = ConsoleClient(server)
            try await browser.signIn()
            let csrf = try await browser.csrf()

            // The list, and a search.
            let list = try await browser.get("/console/users")
            #expect(list.status == .ok && list.text.contains(#"<a href="/console/users" aria-current="page">Users</a>"#))
            for identifier in ["mio@example.com", "ren", "sora"] { #expect(list.text.contains(">\(identifier)</a></td>")) }
            let found = try await browser.get("/console/users?search=RE")
            #expect(found.text.contains(">ren</a></td>") && !found.text.contains(">sora</a></td>"), "search is on the normalised identifier")
            #expect(found.text.contains(#"value="RE""#))
            #expect(try await browser.get("/console/users?search=nobody").text.contains("No account&#39;s identifier contains this."))

            // One account: its facts and its device, the device's name escaped.
            let path = "/console/users/\(grant.account.id)"
            let page = try await browser.get(path)
            #expect(page.text.contains("<h1>mio@example.com</h1>") && page.text.contains("<code>\(grant.account.id)</code>"))
            #expect(page.text.contains(#"<td class="mono">i-1</td><td>Mio&#39;s &lt;iPhone&gt;</td>"#), "the device's name, escaped")
            #expect(page.text.contains(#"<th scope="row">Active sessions</th><td>1</td>"#))
            #expect(try await browser.get("/console/users/mio@example.com").text.contains("<h1>mio@example.com</h1>"), "found by identifier too")
            #expect(try await browser.get("/console/users/usr_00000000000000000000000000000000").status == .notFound)

            // Disabled: its session no longer works; enabled again.
            let disabled = try await browser.post("\(path)/status", ["csrf": csrf, "disabled": "true"])
            #expect(disabled.status == .seeOther && disabled.headers[.location] == "\(path)?notice=userDisabled")
            let me = try await server.send(.get, "/v1/me", headers: [.authorization: "Bearer \(grant.session.accessToken)"], authorized: false)
            #expect(me.status == .unauthorized)
            let shown = try await browser.get("\(path)?notice=userDisabled")
            #expect(shown.text.contains("Disabled: every session was signed out.") && shown.text.contains(#"<strong class="bad">Disabled</strong>"#))
            #expect(shown.text.contains(#"<input type="hidden" name="disabled" value="false">"#))
            #expect(try await browser.post("\(path)/status", ["csrf": csrf, "disabled": "false"]).status == .seeOther)
            #expect(try await server.send(.get, "/v1/admin/users/\(grant.account.id)").decode(UserRecord.self).disabled == false)

            // Groups: added, refused with a bad name at the field, removed.
            #expect(try await browser.post("\(path)/groups", ["csrf": csrf, "group": "staff"]).headers[.location] == "\(path)?notice=groupAdded")
            #expect(try await server.send(.get, "/v1/admin/users/\(grant.account.id)/groups").decode(UserGroups.self).groups == ["staff"])
            let badGroup = try await browser.post("\(path)/groups", ["csrf": csrf, "group": "no spaces"])
            #expect(badGroup.status == .badRequest && badGroup.text.contains(#"id="group-errors""#) && badGroup.text.contains(#"value="no spaces""#))
            let emptyGroup = try await browser.post("\(path)/groups", ["csrf": csrf, "group": " "])
            #expect(emptyGroup.status == .unprocessableContent && emptyGroup.text.contains("Enter a group name"))
            #expect(try await browser.post("\(path)/groups/remove", ["csrf": csrf, "group": "staff"]).status == .seeOther)
            #expect(try await server.send(.get, "/v1/admin/users/\(grant.account.id)/groups").decode(UserGroups.self).groups.isEmpty)

            // A reset link, shown once, which the reset page accepts.
            let reset = try await browser.post("\(path)/password-reset", ["csrf": csrf])
            #expect(reset.status == .ok && reset.headers[.cacheControl] == "no-store")
            let link = try #require(reset.text.range(of: #"readonly value=""#).map { String(reset.text[$0.upperBound...].prefix { $0 != "\"" }) })
            #expect(link.contains("/account/reset-password"), "\(link)")

            // Deleted once the identifier is typed.
            let mismatch = try await browser.post("\(path)/delete", ["csrf": csrf, "confirm": "ren"])
            #expect(mismatch.status == .unprocessableContent && mismatch.text.contains(#"id="confirm-errors""#))
            let deleted = try await browser.post("\(path)/delete", ["csrf": csrf, "confirm": "mio@example.com"])
            #expect(deleted.status == .seeOther && deleted.headers[.location] == "/console/users?notice=deleted")
            #expect(try await server.send(.get, "/v1/admin/users/\(grant.account.id)").status == .notFound)
        }
    }

    @Test func pagesLinkToTheNextUntilTheLast() async throws {
        try await withTestServer { server in
            for index in 0..<53 { _ = try await AccountsTests.signUp(server, String(format: "user%02d", index)) }
            var browser = ConsoleClient(server)
            try await browser.signIn()
            let first = try await browser.get("/console/users")
            #expect(first.text.contains(">user00</a>") && first.text.contains(">user49</a>") && !first.text.contains(">user50</a>"))
            let next = try #require(first.text.range(of: #"<a href="/console/users?"#).map { first.text[$0.lowerBound...] })
            let href = String(next.dropFirst(#"<a href=""#.count).prefix { $0 != "\"" }).replacingOccurrences(of: "&amp;", with: "&")
            #expect(next.contains(#"rel="next">Next page</a>"#))
            let second = try await browser.get(href)
            #expect(second.text.contains(">user50</a>") && second.text.contains(">user52</a>") && !second.text.contains(">user49</a>"))
            #expect(!second.text.contains(#"rel="next""#))
        }
    }

    /// Where an account is signed in, and one of those sessions signed out alone (a lost phone): its token stops
    /// working, the other goes on; the admin API refuses a session of another account.
    @Test func oneSessionIsSignedOutFromTheAccountsPage() async throws {
        try await withTestServer { server in
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            let phone = try await server.send(
                .post, "/v1/auth/sign-up",
                json:
                    #"{"identifier":"mio","password":"\#(AccountsTests.password)","device":{"appId":"shop","installId":"i-1","name":"Mio's <iPhone>"}}"#,
                authorized: false
            ).decode(SessionGrant.self)
            let laptop = try await AccountsTests.signIn(server, "mio")
            let ren = try await AccountsTests.signUp(server, "ren")

            let listed = try await server.send(.get, "/v1/admin/users/mio/sessions")
            #expect(listed.status == .ok && listed.headers[.cacheControl] == "no-store")
            let sessions = try listed.decode(SessionList.self).sessions
            #expect(Set(sessions.map(\.id)) == [phone.session.sessionId, laptop.session.sessionId] && sessions.allSatisfy { !$0.current })
            let onPhone = try #require(sessions.first { $0.id == phone.session.sessionId })
            #expect(onPhone.kind == .app && onPhone.appId == "shop" && onPhone.installId == "i-1" && onPhone.name == "Mio's <iPhone>")

            var browser = ConsoleClient(server)
            try await browser.signIn()
            let csrf = try await browser.csrf()
            let path = "/console/users/\(phone.account.id)"
            let page = try await browser.get(path)
            #expect(page.text.contains(#"<h2 id="sessions">Sessions</h2>"#))
            #expect(page.text.contains(#"<td class="mono">shop</td><td>Mio&#39;s &lt;iPhone&gt;</td>"#), "the session's device name, escaped")
            for session in sessions { #expect(page.text.contains(#"action="\#(path)/sessions/\#(session.id)/end""#)) }

            let ended = try await browser.post("\(path)/sessions/\(phone.session.sessionId)/end", ["csrf": csrf])
            #expect(ended.status == .seeOther && ended.headers[.location] == "\(path)?notice=userSessionEnded")
            #expect(try await browser.get("\(path)?notice=userSessionEnded").text.contains("The session was signed out."))
            func me(_ grant: SessionGrant) async throws -> HTTPResponse.Status {
                try await server.send(.get, "/v1/me", headers: [.authorization: "Bearer \(grant.session.accessToken)"], authorized: false).status
            }
            #expect(try await me(phone) == .unauthorized)
            #expect(try await me(laptop) == .ok)
            let left = try await server.send(.get, "/v1/admin/users/mio/sessions").decode(SessionList.self).sessions
            #expect(left.map(\.id) == [laptop.session.sessionId])
            #expect(!(try await browser.get(path).text.contains(phone.session.sessionId)))

            // Gone already: explained on the account's page. Another account's session: not this account's to end.
            let again = try await browser.post("\(path)/sessions/\(phone.session.sessionId)/end", ["csrf": csrf])
            #expect(again.status == .notFound && again.text.contains("This account has no session") && again.text.contains("<h1>mio</h1>"))
            let other = try await server.send(.delete, "/v1/admin/users/mio/sessions/\(ren.session.sessionId)")
            #expect(other.status == .notFound)
            #expect(try await me(ren) == .ok)
            #expect(try await server.send(.get, "/v1/admin/users/nobody/sessions").status == .notFound)
            #expect(try await server.send(.get, "/v1/admin/users/mio/sessions", authorized: false).status == .unauthorized)
        }
    }
}
