import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import Testing

@testable import KizunaServer

/// The remote config template as a form over HTTP: a row per parameter and condition, values read as their row's
/// type, the admin API's refusals at the cells their JSON paths name, rows added and removed, a concurrent publish
/// explained with the form kept.
@Suite("Admin console: remote config form")
struct ConsoleConfigFormTests {
    @Test(arguments: TestBackend.available)
    func parametersAndConditionsArePublishedFromTheForm(_ backend: TestBackend) async throws {
        try await withTestServer(backend) { server in
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            let first = try await server.send(
                .post, "/v1/admin/apps/shop/config:publish",
                json:
                    #"{"document":{"conditions":[{"name":"ja","when":{"locale":["ja"]}}],"parameters":{"limit":{"type":"number","default":3,"conditionalValues":{"ja":5}},"welcome":{"type":"string","default":"Hello","group":"home"}}}}"#,
                headers: [.ifMatch: "*"])
            #expect(first.status == .ok, "\(first.text)")
            var browser = ConsoleClient(server)
            try await browser.signIn()
            let path = "/console/apps/shop/config/form"
            let page = try await browser.get(path)
            #expect(page.status == .ok && page.text.contains(#"<a href="/console/apps/shop/config">Edit as JSON</a>"#))
            // Rows in name order, then spare rows; each input labelled.
            #expect(page.text.contains(#"<input id="p0-name" name="p0-name" value="limit" aria-label="limit: Parameter""#))
            #expect(page.text.contains(#"<textarea id="p0-conditional" name="p0-conditional" rows="2""#) && page.text.contains("ja = 5</textarea>"))
            #expect(page.text.contains(#"id="p2-name" name="p2-name" value="""#) && page.text.contains(#"id="c1-name" name="c1-name" value="""#))
            #expect(try await browser.get("/console/apps/shop/config").text.contains(#"<a href="/console/apps/shop/config/form">Edit as a form</a>"#))
            let csrf = try #require(ConsoleClient.csrf(in: page.text))
            var fields = [
                "csrf": csrf, "base": "1", "message": "From the form",
                "p0-name": "limit", "p0-type": "number", "p0-default": "3", "p0-conditional": "ja = 5",
                "p1-name": "welcome", "p1-type": "string", "p1-default": "Hello", "p1-group": "home",
                "p2-name": "", "p2-type": "string",
                "c0-name": "ja", "c0-when": #"{"locale":["ja"]}"#, "c1-name": "", "c1-when": "",
            ]

            // A default that is not a number: at its cell, nothing sent.
            let notANumber = try await browser.post(path, fields.merging(["p0-default": "three"]) { $1 })
            #expect(notANumber.status == .badRequest && notANumber.text.contains(#"id="p0-default-errors""#))
            #expect(notANumber.text.contains(#"value="three""#))
            // A conditional value for a condition there is not: the admin API's refusal, at the cell its path names.
            let unknown = try await browser.post(path, fields.merging(["p0-conditional": "ja = 5\nbeta = 7"]) { $1 })
            #expect(unknown.status == .badRequest && unknown.text.contains(#"id="p0-conditional-errors""#), "\(unknown.text)")
            #expect(try await ConsoleConfigTests.live(server).version == 1)

            // Published: a parameter added in a spare row, one removed, a condition added.
            fields.merge([
                "p2-name": "banner", "p2-type": "bool", "p2-default": "true", "p2-conditional": "beta = false", "p1-delete": "on",
                "c1-name": "beta", "c1-when": #"{"appVersion":{">=":"2.0"}}"#,
            ]) { $1 }
            let published = try await browser.post(path, fields)
            #expect(
                published.status == .seeOther && published.headers[.location] == "/console/apps/shop/config?notice=published", "\(published.text)")
            let live = try await ConsoleConfigTests.live(server)
            #expect(live.version == 2 && live.message == "From the form")
            #expect(
                live.document["parameters"]?["welcome"] == nil
                    && live.document["parameters"]?["banner"] == ["type": "bool", "default": true, "conditionalValues": ["beta": false]])
            #expect(live.document["parameters"]?["limit"]?["conditionalValues"] == ["ja": 5])
            #expect(live.document["conditions"]?.arrayValue?.count == 2)

            // The same form again, based on version 1: explained, the form kept, now based on version 2.
            let stale = try await browser.post(path, fields.merging(["p0-default": "4"]) { $1 })
            #expect(stale.status == .preconditionFailed && stale.text.contains(#"name="base" value="2""#) && stale.text.contains(#"value="4""#))
            #expect(try await ConsoleConfigTests.live(server).version == 2)
        }
    }
}
