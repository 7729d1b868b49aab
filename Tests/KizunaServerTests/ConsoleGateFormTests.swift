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

    /// The OS requirement's weekly windows and the OS advisories as rows, and blocked ranges as short text: shown from
    /// the live policy, posted back unchanged as the same policy, changed in their rows, refusals at their cells.
    @Test func osWindowsAndAdvisoriesAreEditedAsRows() async throws {
        try await withTestServer { server in
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            let policy: JSONValue = [
                "minimumVersion": "3.0", "blockedVersions": ["3.5.1", [">=": "3.6.0", "<": "3.6.2"]],
                "minimumOSVersion": [
                    "version": "17.0", "deadline": "2027-01-15T00:00:00+09:00",
                    "windows": [["days": ["sat", "sun"], "from": "02:00", "until": "05:00", "timeZone": "Asia/Tokyo"]],
                ],
                "osAdvisories": [
                    [
                        "osVersion": [">=": "26.0", "<": "26.0.1"], "platforms": ["ios"], "action": "require",
                        "notice": ["url": "https://example.com/os", "texts": ["en": ["title": "Hold on", "message": "Wait for 26.0.1"]]],
                    ]
                ],
            ]
            let body = String(decoding: try JSONEncoder().encode(["document": policy]), as: UTF8.self)
            #expect(try await server.send(.post, "/v1/admin/apps/shop/gate:publish", json: body, headers: [.ifMatch: "*"]).status == .ok)
            var browser = ConsoleClient(server)
            try await browser.signIn()
            let path = "/console/apps/shop/gate/form"
            let page = try await browser.get(path)
            var fields = try ConsoleClient.fields(of: page.text, action: path)
            #expect(fields["blockedVersions"] == "3.5.1\n>= 3.6.0 < 3.6.2")
            #expect(fields["osw0-sat"] == "on" && fields["osw0-sun"] == "on" && fields["osw0-mon"] == nil)
            #expect(fields["osw0-from"] == "02:00" && fields["osw0-until"] == "05:00" && fields["osw0-timeZone"] == "Asia/Tokyo")
            #expect(fields["osw1-from"] == "" && fields["osWindows"] == nil, "a spare window row, no JSON")
            #expect(fields["osa0-versions"] == ">= 26.0 < 26.0.1" && fields["osa0-platforms"] == "ios" && fields["osa0-action"] == "require")
            #expect(fields["osa0-url"] == "https://example.com/os" && fields["osa0-texts"] == "en | Hold on | Wait for 26.0.1")
            #expect(fields["osa1-versions"] == "" && fields["osa1-action"] == "recommend")
            #expect(
                page.text.contains(#"<legend>Window 1</legend>"#)
                    && page.text.contains(#"<legend>Advisory 1</legend>"#)
                    && page.text.contains(#"<label for="osa0-versions">OS versions</label>"#))

            // Posted back unchanged: the same policy.
            fields["message"] = "Unchanged"
            #expect(try await browser.post(path, fields).status == .seeOther)
            #expect(try await Self.live(server).document == policy)
            fields = try ConsoleClient.fields(of: try await browser.get(path).text, action: path)
            #expect(fields["base"] == "2")

            // Refusals at their cells: a time of day that is not one (the admin API's), a range that does not read.
            var bad = fields
            bad["osw0-until"] = "25:00"
            let badTime = try await browser.post(path, bad)
            #expect(badTime.status == .badRequest && badTime.text.contains(#"id="osw0-until-errors""#), "\(badTime.text)")
            #expect(badTime.text.contains(##"<a href="#osw0-until">Window 1: Window until: "##), "the summary names the row")
            bad = fields
            bad["osa0-versions"] = ">= 26.0 <"
            let badRange = try await browser.post(path, bad)
            #expect(badRange.status == .badRequest && badRange.text.contains(#"id="osa0-versions-errors""#))
            bad = fields
            bad["osw1-from"] = "01:00"
            bad["osw1-until"] = "03:00"
            bad["osw1-timeZone"] = "Nowhere/Else"
            let badZone = try await browser.post(path, bad)
            #expect(badZone.status == .badRequest && badZone.text.contains(#"id="osw1-timeZone-errors""#), "\(badZone.text)")
            #expect(try await Self.live(server).version == 2)

            // Changed in the rows: a weekday window added, the advisory now recommends on every platform.
            fields.merge(["osw1-mon": "on", "osw1-from": "22:00", "osw1-until": "06:00", "osw1-timeZone": "+09:00"]) { $1 }
            fields.merge(["osa0-action": "recommend", "osa0-platforms": "", "message": "Rows"]) { $1 }
            #expect(try await browser.post(path, fields).status == .seeOther)
            let live = try await Self.live(server).document
            #expect(
                live["minimumOSVersion"]?["windows"]?.arrayValue?.last == ["days": ["mon"], "from": "22:00", "until": "06:00", "timeZone": "+09:00"])
            #expect(live["osAdvisories"]?.arrayValue?.first?["action"] == "recommend" && live["osAdvisories"]?.arrayValue?.first?["platforms"] == nil)

            // An advisory whose link is null (no link at all) cannot be a row: the advisories keep their JSON.
            var noLink = policy
            if case .object(var object) = noLink {
                object["osAdvisories"] = [["osVersion": "26.0", "notice": ["url": nil]]]
                noLink = .object(object)
            }
            let noLinkBody = String(decoding: try JSONEncoder().encode(["document": noLink]), as: UTF8.self)
            #expect(try await server.send(.post, "/v1/admin/apps/shop/gate:publish", json: noLinkBody, headers: [.ifMatch: "*"]).status == .ok)
            let json = try ConsoleClient.fields(of: try await browser.get(path).text, action: path)
            #expect(json["osAdvisories"] == #"[{"notice":{"url":null},"osVersion":"26.0"}]"# && json["osa0-versions"] == nil)
        }
    }
}
