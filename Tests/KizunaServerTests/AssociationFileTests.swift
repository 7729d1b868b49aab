import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KizunaCore
import Testing

@testable import KizunaServer

/// Where iOS looks for apple-app-site-association, and what an app update's rush of fetches costs.
@Suite("apple-app-site-association as served")
struct AssociationFileTests {
    static let paths = ["/.well-known/apple-app-site-association", "/apple-app-site-association"]

    @Test func theSiteRootServesTheSameBytesWithoutARedirect() async throws {
        try await withTestServer { server in
            _ = try await server.send(.post, "/v1/admin/apps", json: HTTPTests.app)
            var bodies: [String] = []
            for path in Self.paths {
                let served = try await server.send(.get, path, authorized: false)
                #expect(served.status == .ok && served.headers[.location] == nil, "\(path)")
                #expect(served.headers[.contentType] == "application/json" && served.headers[.eTag] != nil)
                bodies.append(served.text)
            }
            #expect(bodies[0] == bodies[1] && bodies[0].contains("ABCDE12345.com.example.app"))

            // A CDN revalidating gets 304 for the bytes it holds.
            let etag = try #require(try await server.send(.get, Self.paths[1], authorized: false).headers[.eTag])
            let revalidated = try await server.send(.get, Self.paths[0], headers: [.ifNoneMatch: etag], authorized: false)
            #expect(revalidated.status == .notModified && revalidated.body.readableBytes == 0)
        }
    }

    @Test func builtOncePerChangeNotPerRequest() async throws {
        try await withTestServer { server in
            let file = try #require(server.associationFile)
            try await Self.change(server, "app") { _ = try await server.send(.post, "/v1/admin/apps", json: HTTPTests.app) }
            for index in 0..<20 { _ = try await server.send(.get, Self.paths[index % 2], authorized: false) }
            #expect(file.builds == 1, "twenty fetches, one build")

            // A settings change and an app change each rebuild it, and the next fetch shows them.
            try await Self.change(server, AssociationFile.settingsChangeKind) {
                let put = try await server.send(.put, "/v1/admin/apps/my-app/associated-domains", json: #"{"appLinks":[{"/":"/a/*"}]}"#)
                #expect(put.status == .ok)
            }
            #expect(try await server.send(.get, Self.paths[1], authorized: false).text.contains("/a/*"))
            try await Self.change(server, "app") {
                _ = try await server.send(
                    .post, "/v1/admin/apps",
                    json: #"{"id":"clip","name":"Clip","platform":"ios","bundleId":"com.example.clip","teamId":"ABCDE12345"}"#)
            }
            for path in Self.paths { #expect(try await server.send(.get, path, authorized: false).text.contains("com.example.clip")) }
            #expect(file.builds == 3)
        }
    }

    /// Runs `body`, then waits until the change feed has delivered its change of `kind` (the writer drops the file at
    /// once; the feed drops it again when it reads the change, so counting builds waits for both).
    static func change(_ server: TestServer, _ kind: String, _ body: () async throws -> Void) async throws {
        try await server.feed.withSubscription { subscription in
            try await body()
            var changes = subscription.changes.makeAsyncIterator()
            while let change = await changes.next(), change.kind != kind {}
        }
    }

    /// On PostgreSQL, a change made through one instance reaches the file another serves, through the change feed.
    @Test(arguments: TestBackend.available.filter { $0 == .postgres })
    func aChangeOnOneInstanceRebuildsTheOthersFile(_ backend: TestBackend) async throws {
        try await withTestServers(backend, configure: { $0.changePollInterval = .seconds(3600) }) { a, b in
            _ = try await a.send(.post, "/v1/admin/apps", json: HTTPTests.app)
            try await b.feed.withSubscription { subscription in
                let before = try await b.send(.get, Self.paths[0], authorized: false)
                #expect(before.text.contains("/b/*") == false)
                let put = try await a.send(.put, "/v1/admin/apps/my-app/associated-domains", json: #"{"appLinks":[{"/":"/b/*"}]}"#)
                #expect(put.status == .ok)
                var changes = subscription.changes.makeAsyncIterator()
                while let change = await changes.next(), change.kind != AssociationFile.settingsChangeKind {}
            }
            // B dropped its file before its subscribers heard of the change.
            #expect(try await b.send(.get, Self.paths[1], authorized: false).text.contains("/b/*"))
        }
    }
}
