import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import Testing

@testable import KizunaServer

/// The console's Update gate section over HTTP: the policy published through the admin API with its mistakes at the
/// editor, and the gate simulator answering with `gate:check`'s own decision.
@Suite("Admin console: update gate")
struct ConsoleGateTests {
    static let policy = #"{"minimumVersion":"3.0","recommendedVersion":"3.10","blockedVersions":["3.5.1"]}"#

    @Test func aPolicyIsPublishedAndABlockedVersionSimulated() async throws {
        try await withTestServer(.sqlite) { server in
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            var browser = ConsoleClient(server)
            try await browser.signIn()
            let page = try await browser.get("/console/apps/shop/gate")
            #expect(page.status == .ok && page.text.contains("<h1>Update gate: Shop</h1>") && page.text.contains("Policy (JSON)"))
            #expect(page.text.contains(#"<a href="/console/apps/shop/gate" aria-current="page">Update gate</a>"#))
            let csrf = try #require(ConsoleClient.csrf(in: page.text))

            let refused = try await browser.post(
                "/console/apps/shop/gate", ["csrf": csrf, "base": "0", "document": #"{"minimumVersion":"three"}"#, "message": "m"])
            #expect(refused.status == .badRequest && refused.text.contains("$.minimumVersion: "), "\(refused.text)")
            let published = try await browser.post(
                "/console/apps/shop/gate", ["csrf": csrf, "base": "0", "document": Self.policy, "message": "Block 3.5.1"])
            #expect(published.status == .seeOther && published.headers[.location] == "/console/apps/shop/gate?notice=published")
            let live = try await server.send(.get, "/v1/admin/apps/shop/gate").decode(PublishedDocument.self)
            #expect(live.version == 1 && live.document["blockedVersions"] == .array(["3.5.1"]))
            let shown = try await browser.get("/console/apps/shop/gate")
            #expect(shown.text.contains("&quot;blockedVersions&quot;") && shown.text.contains("Block 3.5.1"))

            // The simulator asks gate:check itself: a blocked version must update, a current one is fine.
            let blocked = try await browser.get("/console/apps/shop/gate/simulate?appVersion=3.5.1&platform=ios")
            #expect(blocked.status == .ok, "\(blocked.text)")
            #expect(blocked.text.contains(#"<tr><th scope="row" class="mono">action</th><td><code>&quot;require&quot;</code></td></tr>"#))
            #expect(blocked.text.contains(#"<tr><th scope="row" class="mono">reason</th><td><code>&quot;blockedVersion&quot;</code></td></tr>"#))
            #expect(!blocked.text.contains(#"id="at""#), "the gate is simulated at the server's time")
            let current = try await browser.get("/console/apps/shop/gate/simulate?appVersion=3.10.2")
            #expect(current.text.contains(#"<td><code>&quot;none&quot;</code></td>"#))
            let bad = try await browser.get("/console/apps/shop/gate/simulate?appVersion=x")
            #expect(bad.status == .badRequest && bad.text.contains(#"aria-invalid="true""#))
        }
    }
}
