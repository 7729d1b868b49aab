import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import Testing

@testable import KizunaServer

/// The update gate's policy as a form over HTTP: filled from the live policy, read back into it, the admin API's
/// refusals at the fields their JSON paths name, a concurrent publish explained with the form kept.
@Suite("Admin console: update gate form")
struct ConsoleGateFormTests {
    static let policy = #"""
        {"document":{"minimumVersion":"3.0","blockedVersions":["3.5.1"],"maintenance":{"allowInstallIds":["tester-1"]},
        "notices":{"require":{"url":"https://apps.apple.com/app/id1","texts":{"ja":{"title":"更新","message":"更新してください"}}}}}}
        """#

    static func live(_ server: TestServer) async throws -> PublishedDocument {
        try await server.send(.get, "/v1/admin/apps/shop/gate").decode(PublishedDocument.self)
    }

    @Test(arguments: TestBackend.available)
    func thePolicyIsPublishedFromTheForm(_ backend: TestBackend) async throws {
        try await withTestServer(backend) { server in
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            let first = try await server.send(.post, "/v1/admin/apps/shop/gate:publish", json: Self.policy, headers: [.ifMatch: "*"])
            #expect(first.status == .ok, "\(first.text)")
            var browser = ConsoleClient(server)
            try await browser.signIn()
            let path = "/console/apps/shop/gate/form"
            let page = try await browser.get(path)
            #expect(page.status == .ok && page.text.contains(#"id="minimumVersion" name="minimumVersion" type="text" value="3.0""#))
            #expect(page.text.contains(">3.5.1</textarea>") && page.text.contains(">tester-1</textarea>"))
            #expect(page.text.contains(">ja | 更新 | 更新してください</textarea>") && page.text.contains(#"value="https://apps.apple.com/app/id1""#))
            #expect(try await browser.get("/console/apps/shop/gate").text.contains(#"<a href="/console/apps/shop/gate/form">Edit as a form</a>"#))
            let csrf = try #require(ConsoleClient.csrf(in: page.text))
            var fields = [
                "csrf": csrf, "base": "1", "message": "From the form", "minimumVersion": "3.0", "blockedVersions": "3.5.1",
                "maintenanceTesters": "tester-1", "notice-require-url": "https://apps.apple.com/app/id1",
                "notice-require-texts": "ja | 更新 | 更新してください",
            ]

            // A text line without its parts: at its field, nothing sent.
            let badLine = try await browser.post(path, fields.merging(["notice-require-texts": "ja only"]) { $1 })
            #expect(badLine.status == .badRequest && badLine.text.contains(#"id="notice-require-texts-errors""#))
            // Refused by the admin API: a recommended version below the minimum, at its field.
            let below = try await browser.post(path, fields.merging(["recommendedVersion": "2.0"]) { $1 })
            #expect(below.status == .badRequest && below.text.contains(#"id="recommendedVersion-errors""#), "\(below.text)")
            #expect(try await Self.live(server).version == 1)

            // Published: a blocked range added, maintenance switched on with a window.
            fields.merge([
                "blockedVersions": "3.5.1\n{\">=\": \"3.6.0\", \"<\": \"3.6.2\"}", "maintenanceActive": "on",
                "maintenanceFrom": "2026-12-01T01:00", "maintenanceUntil": "2026-12-01T03:00", "maintenanceTimeZone": "Asia/Tokyo",
            ]) { $1 }
            let published = try await browser.post(path, fields)
            #expect(published.status == .seeOther && published.headers[.location] == "/console/apps/shop/gate?notice=published", "\(published.text)")
            let live = try await Self.live(server)
            #expect(live.version == 2 && live.message == "From the form")
            #expect(live.document["blockedVersions"] == ["3.5.1", [">=": "3.6.0", "<": "3.6.2"]])
            #expect(live.document["maintenance"]?["active"] == true && live.document["maintenance"]?["window"]?["timeZone"] == "Asia/Tokyo")
            #expect(live.document["notices"]?["require"]?["texts"]?["ja"]?["title"] == "更新")

            // The same form again, based on version 1: explained, kept, now based on version 2.
            let stale = try await browser.post(path, fields.merging(["minimumVersion": "3.1"]) { $1 })
            #expect(stale.status == .preconditionFailed && stale.text.contains(#"name="base" value="2""#) && stale.text.contains(#"value="3.1""#))
            #expect(try await Self.live(server).version == 2)
        }
    }
}
