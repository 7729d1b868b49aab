import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import Testing

@testable import KizunaServer

/// An app's Releases page over HTTP: releases with their artifacts, downloaded through the console as the admin API
/// streams them, and a version blocked and unblocked through the gate policy, linked to the change it published.
@Suite("Admin console: releases")
struct ConsoleReleasesTests {
    @Test(arguments: TestBackend.available)
    func releasesAreListedDownloadedBlockedAndUnblocked(_ backend: TestBackend) async throws {
        try await withTestServer(backend) { server in
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            var browser = ConsoleClient(server)
            try await browser.signIn()
            let csrf = try await browser.csrf()
            #expect(try await browser.get("/console/apps/shop/releases").text.contains("No releases recorded yet"))

            let created = try await server.send(
                .post, "/v1/admin/apps/shop/releases", json: #"{"version":"1.2.0","build":"42","channel":"appstore","commit":"0123456789abcdef"}"#)
            #expect(created.status == .created)
            let release = try created.decode(ReleaseRecord.self)
            let bytes = "the app's <dSYM> bytes"
            let upload = try await server.send(
                .put, "/v1/admin/apps/shop/releases/\(release.id)/artifacts/Shop.dSYM.zip", headers: [.contentType: "application/zip"], body: bytes)
            #expect(upload.status == .created)

            let page = try await browser.get("/console/apps/shop/releases")
            #expect(page.status == .ok && page.text.contains(#"<th scope="row">1.2.0 <span class="hint">(42)</span></th>"#))
            #expect(page.text.contains(#"<td class="mono">v1.2.0-42<br>0123456789ab</td>"#))
            let href = "/console/apps/shop/releases/\(release.id)/artifacts/Shop.dSYM.zip"
            #expect(page.text.contains(#"<a href="\#(href)" download>Shop.dSYM.zip</a>"#))
            #expect(page.text.contains(#"<input type="hidden" name="block" value="true">"#))

            // Downloaded through the console: the same bytes, as an attachment.
            let download = try await browser.get(href)
            #expect(download.status == .ok && download.text == bytes)
            #expect(download.headers[.contentDisposition]?.hasPrefix("attachment") == true && download.headers[.cacheControl] == "no-store")
            let part = try await browser.get(href, headers: [.range: "bytes=4-6"])
            #expect(part.status == .partialContent && part.text == "app")
            #expect(try await browser.get("/console/apps/shop/releases/\(release.id)/artifacts/missing.zip").status == .notFound)
            #expect(try await ConsoleClient(server).get(href).headers[.location] == "/console/sign-in", "no download without a session")

            // Blocked: the gate policy now blocks it, and the page links to the change.
            let gateBefore = try await server.send(.get, "/v1/admin/apps/shop/gate").decode(PublishedDocument.self)
            let fields = ["csrf": csrf, "version": "1.2.0", "block": "true", "base": "\(gateBefore.version)"]
            let blocked = try await browser.post("/console/apps/shop/releases/block", fields)
            let gate = try await server.send(.get, "/v1/admin/apps/shop/gate").decode(PublishedDocument.self)
            #expect(
                blocked.status == .seeOther && blocked.headers[.location] == "/console/apps/shop/releases?notice=versionBlocked&gate=\(gate.version)")
            #expect(gate.document["blockedVersions"] == .array([.string("1.2.0")]) && gate.message == "Block 1.2.0 (console)")
            let shown = try await browser.get(try #require(blocked.headers[.location]))
            #expect(shown.text.contains(#"<a href="/console/apps/shop/gate/diff?from=\#(gate.version - 1)&to=\#(gate.version)">"#))
            #expect(shown.text.contains(#"<strong class="bad">Blocked</strong>"#) && shown.text.contains(#"name="block" value="false""#))
            let told = try await UpdateGateTests.check(server, #"{"appVersion":"1.2.0","platform":"ios"}"#)
            #expect(told.action == "require" && told.reason == "blockedVersion", "\(told)")

            // A form from before that publish is explained, and publishes nothing.
            let stale = try await browser.post("/console/apps/shop/releases/block", fields.merging(["block": "false"]) { $1 })
            #expect(stale.status == .preconditionFailed && stale.text.contains("The gate policy changed since this page was shown"))
            #expect(try await server.send(.get, "/v1/admin/apps/shop/gate").decode(PublishedDocument.self).version == gate.version)

            // Unblocked over the version shown.
            let unblocked = try await browser.post(
                "/console/apps/shop/releases/block", ["csrf": csrf, "version": "1.2.0", "block": "false", "base": "\(gate.version)"])
            #expect(unblocked.status == .seeOther)
            #expect(try await server.send(.get, "/v1/admin/apps/shop/gate").decode(PublishedDocument.self).document["blockedVersions"] == nil)
        }
    }
}
