import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import Testing

@testable import KizunaServer

/// The console's Remote config section over HTTP: publishing through the admin API with the refusals shown at the
/// editor, a concurrent publish explained without losing the draft, the history's diff and rollback.
@Suite("Admin console: remote config")
struct ConsoleConfigTests {
    static let welcome = #"{"parameters":{"welcome":{"type":"string","default":"Hello","description":"The first screen's title"}}}"#
    static let mistake =
        #"{"parameters":{"welcome":{"type":"strng","default":"Hello"},"limit":{"type":"number","default":3,"conditionalValues":{"ja":5}}}}"#

    /// The live config as the admin API gives it.
    static func live(_ server: TestServer) async throws -> PublishedDocument {
        try await server.send(.get, "/v1/admin/apps/shop/config").decode(PublishedDocument.self)
    }

    @Test(arguments: TestBackend.available)
    func aTemplateIsPublishedThroughTheAdminAPIWithItsMistakesShownAtTheEditor(_ backend: TestBackend) async throws {
        try await withTestServer(backend) { server in
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            var browser = ConsoleClient(server)
            try await browser.signIn()
            let empty = try await browser.get("/console/apps/shop/config")
            #expect(empty.status == .ok && empty.text.contains("Nothing has been published yet.") && empty.text.contains(#"name="base" value="0""#))
            let csrf = try #require(ConsoleClient.csrf(in: empty.text))

            // Not JSON: said at the editor, the text kept, nothing sent.
            let broken = try await browser.post(
                "/console/apps/shop/config", ["csrf": csrf, "base": "0", "document": "{\"parameters\": {", "message": "m"])
            #expect(broken.status == .badRequest && broken.text.contains("The template is not valid JSON"))
            #expect(broken.text.contains(#"aria-invalid="true""#) && broken.text.contains("{&quot;parameters&quot;: {</textarea>"))

            // Refused by the admin API: every problem with its JSON path, at the editor; nothing published.
            let refused = try await browser.post("/console/apps/shop/config", ["csrf": csrf, "base": "0", "document": Self.mistake, "message": "m"])
            #expect(refused.status == .badRequest, "\(refused.text)")
            #expect(refused.text.contains(#"<ul class="errors" id="document-errors">"#))
            #expect(refused.text.contains("$.parameters.welcome.type: "), "\(refused.text)")
            #expect(refused.text.contains("$.parameters.limit.conditionalValues.ja: "), "\(refused.text)")
            #expect(try await Self.live(server).version == 0)

            let published = try await browser.post(
                "/console/apps/shop/config", ["csrf": csrf, "base": "0", "document": Self.welcome, "message": "First"])
            #expect(published.status == .seeOther && published.headers[.location] == "/console/apps/shop/config?notice=published")
            let live = try await Self.live(server)
            let expected = try JSONDecoder().decode(JSONValue.self, from: Data(Self.welcome.utf8))
            #expect(live.version == 1 && live.message == "First" && live.document == expected)
            let page = try await browser.get("/console/apps/shop/config?notice=published")
            #expect(page.text.contains(#"<p role="status" class="notice">Published.</p>"#) && page.text.contains(#"<tr id="parameter-welcome">"#))
            #expect(page.text.contains("The first screen&#39;s title") && page.text.contains(#"name="base" value="1""#))
        }
    }

    @Test func aConcurrentPublishIsExplainedAndTheDraftKept() async throws {
        try await withTestServer(.sqlite) { server in
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            try await UpdateGateTests.publish(server, "config", Self.welcome)
            var browser = ConsoleClient(server)
            try await browser.signIn()
            let csrf = try await browser.csrf(on: "/console/apps/shop/config")
            // Someone else publishes version 2 while the page, at version 1, is being edited.
            try await UpdateGateTests.publish(server, "config", #"{"parameters":{"welcome":{"type":"string","default":"Hi"}}}"#, message: "theirs")
            let mine = #"{"parameters":{"welcome":{"type":"string","default":"Mine"}}}"#
            let conflict = try await browser.post("/console/apps/shop/config", ["csrf": csrf, "base": "1", "document": mine, "message": "mine"])
            #expect(conflict.status == .preconditionFailed)
            #expect(conflict.text.contains("Someone published while you were editing: 2 · ") && conflict.text.contains("theirs"))
            #expect(conflict.text.contains("$.parameters.welcome.default") && conflict.text.contains("<code>&quot;Hi&quot;</code>"))
            #expect(conflict.text.contains("&quot;Mine&quot;") && conflict.text.contains(#"name="base" value="2""#), "the draft, now against 2")
            #expect(try await Self.live(server).version == 2, "nothing published over theirs")
            // Publishing again, knowingly, replaces theirs.
            let again = try await browser.post("/console/apps/shop/config", ["csrf": csrf, "base": "2", "document": mine, "message": "mine"])
            #expect(again.status == .seeOther)
            #expect(try await Self.live(server).document["parameters"]?["welcome"]?["default"] == "Mine")
        }
    }

    @Test func versionsAreComparedAndRolledBack() async throws {
        try await withTestServer(.sqlite) { server in
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            try await UpdateGateTests.publish(server, "config", Self.welcome, message: "one")
            try await UpdateGateTests.publish(
                server, "config", #"{"parameters":{"welcome":{"type":"string","default":"Hi"},"x":{"type":"bool","default":true}}}"#)
            var browser = ConsoleClient(server)
            try await browser.signIn()
            let page = try await browser.get("/console/apps/shop/config")
            #expect(page.text.contains(#"<input type="hidden" name="version" value="1">"#) && page.text.contains(">Live<"))

            let diff = try await browser.get("/console/apps/shop/config/diff?from=1&to=2")
            #expect(diff.status == .ok && diff.text.contains(#"<tr class="changed"><th scope="row" class="mono">$.parameters.welcome.default</th>"#))
            #expect(diff.text.contains(#"<tr class="added"><th scope="row" class="mono">$.parameters.x</th>"#))
            #expect(diff.text.contains(#"<tr class="removed">"#) && diff.text.contains("$.parameters.welcome.description"))
            let unknown = try await browser.get("/console/apps/shop/config/diff?from=99")
            #expect(unknown.status == .notFound && unknown.text.contains("not kept"))

            let csrf = try #require(ConsoleClient.csrf(in: page.text))
            // A stale page (version 2 is no longer live) is explained, not rolled back over the newer version.
            try await UpdateGateTests.publish(server, "config", Self.welcome, message: "three")
            let stale = try await browser.post("/console/apps/shop/config/rollback", ["csrf": csrf, "version": "1", "base": "2"])
            #expect(stale.status == .preconditionFailed && stale.text.contains("Someone published while you were editing: 3"))
            let rolled = try await browser.post("/console/apps/shop/config/rollback", ["csrf": csrf, "version": "2", "base": "3"])
            #expect(rolled.status == .seeOther && rolled.headers[.location] == "/console/apps/shop/config?notice=rolledBack")
            let live = try await Self.live(server)
            #expect(live.version == 4 && live.rollbackOf == 2 && live.document["parameters"]?["x"]?["default"] == true)
        }
    }
}
