import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KizunaCore
import Testing

@testable import KizunaServer

@Suite("apple-app-site-association")
struct AssociatedDomainsTests {
    @Test(arguments: TestBackend.available)
    func servedFromTheRegistryAndPerAppSettings(_ backend: TestBackend) async throws {
        try await withTestServer(backend) { server in
            // Nothing registered: an empty object, still 200 and JSON.
            let empty = try await server.send(.get, "/.well-known/apple-app-site-association", authorized: false)
            #expect(empty.status == .ok && empty.headers[.contentType] == "application/json" && empty.text == "{}")

            _ = try await server.send(.post, "/v1/admin/apps", json: HTTPTests.app)
            _ = try await server.send(
                .post, "/v1/admin/apps", json: #"{"id":"clip","name":"Clip","platform":"ios","bundleId":"com.example.clip","teamId":"ABCDE12345"}"#)
            _ = try await server.send(
                .post, "/v1/admin/apps", json: #"{"id":"droid","name":"Droid","platform":"android","bundleId":"com.example.droid"}"#)
            let settings = #"""
                {"appLinks":[{"/":"/help/*","exclude":true,"comment":"help stays on the web"},{"/":"/$(lang)/items/*","?":{"ref":"?*"},"caseSensitive":false}],
                 "appClips":["com.example.app.Clip"],"legacyPaths":true,"substitutionVariables":{"shelf":["books","games"]}}
                """#
            let put = try await server.send(.put, "/v1/admin/apps/my-app/associated-domains", json: settings)
            #expect(put.status == .ok)
            #expect(try put.decode(AssociatedDomainSettings.self).appLinks.count == 2)

            let served = try await server.send(.get, "/.well-known/apple-app-site-association", authorized: false)
            #expect(served.status == .ok && served.headers[.contentType] == "application/json" && served.headers[.location] == nil)
            let file = try JSONDecoder().decode(AppSiteAssociation.self, from: Data(served.body.readableBytesView))
            #expect(file.webcredentials?.apps == ["ABCDE12345.com.example.clip", "ABCDE12345.com.example.app"])
            #expect(file.appclips?.apps == ["ABCDE12345.com.example.app.Clip"])
            #expect(file.applinks?.details.map(\.appIDs) == [["ABCDE12345.com.example.app"]])
            #expect(file.applinks?.details.first?.paths == ["NOT /help/*"])
            #expect(file.applinks?.substitutionVariables == ["shelf": ["books", "games"]])
            #expect(file.applinks?.appID(opening: URL(string: "https://example.com/ja/items/42?ref=mail")!) == "ABCDE12345.com.example.app")
            #expect(file.applinks?.appID(opening: URL(string: "https://example.com/help/items/42?ref=mail")!) == nil)

            let single = try await server.send(.get, "/v1/admin/apps/clip/apple-app-site-association")
            #expect(single.text == #"{"webcredentials":{"apps":["ABCDE12345.com.example.clip"]}}"#)
        }
    }

    @Test func refusedChangesLeaveThePreviousFileLive() async throws {
        try await withTestServer { server in
            _ = try await server.send(.post, "/v1/admin/apps", json: HTTPTests.app)
            #expect(try await server.send(.put, "/v1/admin/apps/my-app/associated-domains", json: #"{"appLinks":[{"/":"/a/*"}]}"#).status == .ok)
            let before = try await server.send(.get, "/.well-known/apple-app-site-association", authorized: false).text

            // Over 128 KB: refused with the size.
            let rules = (0..<2000).map { #"{"/":"/products/category-\#($0)/*","comment":"rule number \#($0) for the catalogue"}"# }
            let huge = try await server.send(
                .put, "/v1/admin/apps/my-app/associated-domains", json: #"{"appLinks":[\#(rules.joined(separator: ","))]}"#)
            #expect(huge.status == .badRequest && huge.error?.code == .validationFailed)
            #expect(huge.error?.message.contains("131072") == true && huge.error?.message.contains(" bytes") == true)

            // An App Clip outside the app's bundle id, and an app Apple does not distribute.
            let clip = try await server.send(.put, "/v1/admin/apps/my-app/associated-domains", json: #"{"appClips":["com.other.Clip"]}"#)
            #expect(clip.error?.details.map(\.code) == ["bad_app_clip"])
            _ = try await server.send(
                .post, "/v1/admin/apps", json: #"{"id":"droid","name":"Droid","platform":"android","bundleId":"com.example.droid"}"#)
            let android = try await server.send(.put, "/v1/admin/apps/droid/associated-domains", json: #"{}"#)
            #expect(android.status == .badRequest && android.error?.field == "platform")
            #expect(try await server.send(.put, "/v1/admin/apps/ghost/associated-domains", json: #"{}"#).status == .notFound)

            #expect(try await server.send(.get, "/.well-known/apple-app-site-association", authorized: false).text == before)
            let kept = try await server.send(.get, "/v1/admin/apps/my-app/associated-domains").decode(AssociatedDomainSettings.self)
            #expect(kept.appLinks.map(\.path) == ["/a/*"])
        }
    }
}
