import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import Testing

@testable import KizunaServer

/// An app's API keys page over HTTP: a key made and shown once, refused values at their fields, and a key revoked.
@Suite("Admin console: API keys")
struct ConsoleAPIKeysTests {
    @Test(arguments: TestBackend.available)
    func keysAreCreatedShownOnceAndRevoked(_ backend: TestBackend) async throws {
        try await withTestServer(backend) { server in
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            var browser = ConsoleClient(server)
            try await browser.signIn()
            let path = "/console/apps/shop/api-keys"
            let csrf = try await browser.csrf(on: path)
            #expect(try await browser.get(path).text.contains("No API keys yet."))

            // Refused: a duration the admin API does not take, and one that is not a number, each at its field.
            let tooLong = try await browser.post(path, ["csrf": csrf, "name": "web", "expiresInDays": "400"])
            #expect(tooLong.status == .badRequest && tooLong.text.contains(#"id="expiresInDays-errors""#) && tooLong.text.contains(#"value="web""#))
            let notANumber = try await browser.post(path, ["csrf": csrf, "name": "web", "expiresInDays": "soon"])
            #expect(notANumber.status == .badRequest && notANumber.text.contains("enter a whole number of days"))

            // Made: the key is on this answer only (never cached); the list shows its name, never the key again.
            let created = try await browser.post(path, ["csrf": csrf, "name": "web", "expiresInDays": "30"])
            #expect(created.status == .created && created.headers[.cacheControl] == "no-store")
            let key = try #require(created.text.range(of: #"readonly value=""#).map { String(created.text[$0.upperBound...].prefix { $0 != "\"" }) })
            #expect(key.hasPrefix("kzk_"))
            let list = try await browser.get(path)
            #expect(list.text.contains("<td>web</td>") && !list.text.contains(key))
            let info = try #require(try await server.send(.get, "/v1/admin/apps/shop/api-keys").decode(APIKeyList.self).keys.first)
            #expect(info.name == "web" && info.revokedAt == nil)

            // Revoked.
            let revoked = try await browser.post("\(path)/\(info.id)/revoke", ["csrf": csrf])
            #expect(revoked.status == .seeOther && revoked.headers[.location] == "\(path)?notice=keyRevoked")
            #expect(try await browser.get("\(path)?notice=keyRevoked").text.contains(#"<strong class="bad">Revoked</strong>"#))
            #expect(try await server.send(.get, "/v1/admin/apps/shop/api-keys").decode(APIKeyList.self).keys.first?.revokedAt != nil)
            #expect(try await browser.post("\(path)/nokey/revoke", ["csrf": csrf]).status == .notFound)
            #expect(try await browser.post("\(path)/\(info.id)/revoke", ["csrf": "forged"]).status == .forbidden)
        }
    }
}
