import Foundation
import KizunaCore
import Testing

@testable import KizunaClient
@testable import KizunaServer

/// `app.push` against a live server: the token's bytes registered as hex, nothing sent again while nothing changed,
/// the registration following sign-in and sign-out by itself, unregistering, and a payload decoded into the app's type.
@Suite("Push registration through the SDK")
struct PushTests {
    static let bytes = Data([0x70, 0xa7, 0xff, 0x15] + Array(repeating: 0x0c, count: 28))

    @Test func theTokenIsRegisteredAsHexAndFollowsWhoIsSignedIn() async throws {
        try await LiveServer.run(configure: AuthTests.cheapHashing) { server in
            try await server.createShop()
            let app = try AuthTests.app(server, directory: LiveServer.temporaryDirectory())
            let registry = PushDeviceRepository(database: server.parts.database)
            let installId = try #require(app.device.installId)

            let first = try await app.push.register(deviceToken: Self.bytes, environment: .sandbox)
            #expect(first.token == "70a7ff15" + String(repeating: "0c", count: 28) && first.environment == .sandbox && first.userId == nil)
            #expect(first.appVersion == "1.0" && first.installId == installId)
            // The same registration again: not sent (the server's copy keeps its time).
            #expect(try await app.push.register(deviceToken: Self.bytes, environment: .sandbox) == first)
            #expect(try await registry.device(app: "shop", installId: installId) == first)

            // Signing in and out registers again by itself, as the account and then as nobody.
            var registered = await app.push.registrations().makeAsyncIterator()
            let mio = try await app.auth.signUp(identifier: "mio@example.com", password: AuthTests.password)
            #expect(await registered.next()?.userId == mio.id)
            #expect(try await registry.device(app: "shop", installId: installId)?.userId == mio.id)
            try await app.auth.signOut()
            #expect(await registered.next().map { $0.userId == nil } == true)

            try await app.push.unregister()
            #expect(try await registry.device(app: "shop", installId: installId) == nil)
            try await app.push.unregister()  // already gone: no error
        }
    }

    @Test func aPayloadDecodesIntoTheAppsType() throws {
        struct Payload: Decodable, Equatable {
            struct APS: Decodable, Equatable { var badge: Int }
            var aps: APS
            var roomId: String
        }
        let userInfo: [AnyHashable: Any] = ["aps": ["badge": 3, "alert": ["title": "Mio"]], "roomId": "lobby"]
        #expect(try Push.decode(userInfo, as: Payload.self) == Payload(aps: .init(badge: 3), roomId: "lobby"))
        #expect(throws: KizunaError.self) { try Push.decode(["roomId": 7], as: Payload.self) }
    }
}
