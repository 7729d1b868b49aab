import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import NIOCore
import Testing

@testable import KizunaServer

/// The console's Apps section over HTTP: registering, editing and deleting an app through the admin API, its
/// refusals shown at the fields they name, and the pages in the reader's language.
@Suite("Admin console: apps")
struct ConsoleAppsTests {
    @Test(arguments: TestBackend.available)
    func appsAreRegisteredEditedAndDeletedThroughTheAdminAPI(_ backend: TestBackend) async throws {
        try await withTestServer(backend) { server in
            var browser = ConsoleClient(server)
            try await browser.signIn()
            let csrf = try await browser.csrf()
            let empty = try await browser.get("/console/apps")
            #expect(empty.text.contains("No apps yet"))

            // Two mistakes: both shown at their fields, with what was typed kept.
            var fields = [
                "csrf": csrf, "id": "Bad Id", "name": "Mio", "platform": "ios", "bundleId": "com.example.mio", "teamId": "", "storeURL": "",
            ]
            let refused = try await browser.post("/console/apps", fields)
            #expect(refused.status == .badRequest)
            #expect(refused.text.contains(#"<div class="summary" role="alert">"#))
            #expect(
                refused.text.contains(
                    #"<input id="id" name="id" type="text" value="Bad Id" aria-describedby="id-hint id-errors" aria-invalid="true""#))
            #expect(refused.text.contains(#"<ul class="errors" id="teamId-errors"><li>Apple team id: is required for Apple platforms</li></ul>"#))
            #expect(refused.text.contains(##"<a href="#teamId">"##))
            #expect(try await server.send(.get, "/v1/admin/apps").decode(AppList.self).apps.isEmpty)

            fields["id"] = "mio"
            fields["teamId"] = "ABCDE12345"
            let created = try await browser.post("/console/apps", fields)
            #expect(created.status == .seeOther && created.headers[.location] == "/console/apps?notice=created")
            let list = try await browser.get("/console/apps?notice=created")
            #expect(list.text.contains(#"<p role="status" class="notice">App registered.</p>"#))
            #expect(list.text.contains(#"<a class="mono" href="/console/apps/mio">mio</a>"#) && list.text.contains("<td>iOS</td>"))
            let stored = try await server.send(.get, "/v1/admin/apps/mio").decode(AppRecord.self)
            #expect(stored.name == "Mio" && stored.teamId == "ABCDE12345" && stored.storeURL == nil)

            // An edit: the form shows the app; a bad value is refused at its field; a good one is saved.
            let form = try await browser.get("/console/apps/mio")
            #expect(form.text.contains(#"value="com.example.mio""#) && form.text.contains(#"<option value="ios" selected>iOS</option>"#))
            let edit = ["csrf": csrf, "name": "Mio Shop", "platform": "ios", "bundleId": "com.example.mio", "teamId": "ABCDE12345"]
            let badURL = try await browser.post("/console/apps/mio", edit.merging(["storeURL": "not a url"]) { $1 })
            #expect(badURL.status == .badRequest && badURL.text.contains(#"id="storeURL-errors""#) && badURL.text.contains(#"value="not a url""#))
            let saved = try await browser.post("/console/apps/mio", edit.merging(["storeURL": "https://apps.apple.com/app/id42"]) { $1 })
            #expect(saved.status == .seeOther && saved.headers[.location] == "/console/apps/mio?notice=saved")
            var updated = try await server.send(.get, "/v1/admin/apps/mio").decode(AppRecord.self)
            #expect(updated.name == "Mio Shop" && updated.storeURL == "https://apps.apple.com/app/id42")
            // An emptied optional field is cleared.
            #expect(try await browser.post("/console/apps/mio", edit.merging(["storeURL": ""]) { $1 }).status == .seeOther)
            updated = try await server.send(.get, "/v1/admin/apps/mio").decode(AppRecord.self)
            #expect(updated.storeURL == nil && updated.name == "Mio Shop")

            // Deleting asks for the id; a wrong one deletes nothing.
            let confirm = try await browser.get("/console/apps/mio/delete")
            #expect(confirm.status == .ok && confirm.text.contains("cannot be undone"))
            let mismatch = try await browser.post("/console/apps/mio/delete", ["csrf": csrf, "confirm": "mi"])
            #expect(mismatch.status == .unprocessableContent && mismatch.text.contains("does not match"))
            #expect(try await server.send(.get, "/v1/admin/apps/mio").status == .ok)
            let deleted = try await browser.post("/console/apps/mio/delete", ["csrf": csrf, "confirm": "mio"])
            #expect(deleted.status == .seeOther && deleted.headers[.location] == "/console/apps?notice=deleted")
            #expect(try await server.send(.get, "/v1/admin/apps/mio").status == .notFound)
            let gone = try await browser.get("/console/apps/mio")
            #expect(gone.status == .notFound && gone.text.contains("There is no such app."))
        }
    }

    @Test func associatedDomainSettingsAreSavedBesideTheServedFileAndItsSize() async throws {
        try await withTestServer(.sqlite) { server in
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            var browser = ConsoleClient(server)
            try await browser.signIn()
            let page = try await browser.get("/console/apps/shop/associated-domains")
            let served = try await server.send(.get, "/.well-known/apple-app-site-association", authorized: false)
            #expect(page.status == .ok && page.text.contains("ABCDE12345.com.example.shop") && page.text.contains(#"<textarea id="settings""#))
            #expect(page.text.contains(#"max="131072""#) && page.text.contains(#"value="\#(served.body.readableBytes)""#))
            #expect(page.text.contains("\(served.body.readableBytes) bytes of 131,072 ("))
            let csrf = try #require(ConsoleClient.csrf(in: page.text))

            let broken = try await browser.post("/console/apps/shop/associated-domains", ["csrf": csrf, "settings": "{"])
            #expect(broken.status == .badRequest && broken.text.contains("This is not valid JSON") && broken.text.contains(#"aria-invalid="true""#))
            let refused = try await browser.post(
                "/console/apps/shop/associated-domains", ["csrf": csrf, "settings": #"{"appClips":["com.other.clip"]}"#])
            #expect(refused.status == .badRequest && refused.text.contains(#"id="settings-errors""#) && refused.text.contains("com.other.clip"))

            let settings = #"{"webCredentials":true,"appLinks":[{"/":"/items/*","comment":"items"}]}"#
            let saved = try await browser.post("/console/apps/shop/associated-domains", ["csrf": csrf, "settings": settings])
            #expect(saved.status == .seeOther && saved.headers[.location] == "/console/apps/shop/associated-domains?notice=saved")
            let after = try await browser.get("/console/apps/shop/associated-domains?notice=saved")
            #expect(after.text.contains("Changes saved.") && after.text.contains("/items/*"))
            let stored = try await server.send(.get, "/v1/admin/apps/shop/associated-domains").decode(JSONValue.self)
            #expect(stored["appLinks"]?.arrayValue?.first?["/"] == "/items/*")
        }
    }

    @Test func pagesSpeakTheReadersLanguageAndTheSwitchRemembersAChoice() async throws {
        try await withTestServer(.sqlite) { server in
            var browser = ConsoleClient(server)
            try await browser.signIn()
            let japanese = try await browser.get("/console/apps", headers: [.acceptLanguage: "ja-JP,ja;q=0.9,en;q=0.5"])
            #expect(japanese.text.contains(#"<html lang="ja">"#) && japanese.text.contains("<h1>アプリ</h1>"))
            #expect(japanese.text.contains(#"<a href="/console/language?to=en&amp;back=%2Fconsole%2Fapps" lang="en" hreflang="en">English</a>"#))

            let chosen = try await browser.get("/console/language?to=en&back=%2Fconsole%2Fapps")
            #expect(chosen.status == .seeOther && chosen.headers[.location] == "/console/apps")
            let (name, value, attributes) = AccountsTests.parseCookie(try #require(chosen.headers[values: .setCookie].first))
            #expect(name == ConsoleController.languageCookie && value == "en" && attributes["path"] == "/console")
            browser.language = value
            let english = try await browser.get("/console/apps", headers: [.acceptLanguage: "ja"])
            #expect(english.text.contains(#"<html lang="en">"#) && english.text.contains("<h1>Apps</h1>"))

            // The way back is a console page on this site, or the console's home.
            for back in ["https://evil.example/", "//evil.example", "/account", "/console/%0d%0aSet-Cookie:x"] {
                let elsewhere = try await browser.get("/console/language?to=ja&back=\(ConsoleClient.encode(back))")
                #expect(elsewhere.headers[.location] == "/console", "\(back)")
            }
            // An unknown language is not remembered.
            #expect(try await browser.get("/console/language?to=xx").headers[values: .setCookie].isEmpty)
        }
    }
}
