import Foundation
import Hummingbird
import KizunaCore
import Logging
import ServiceLifecycle
import Testing

@testable import KizunaClient
@testable import KizunaServer

/// The SDK's HTTP client against a real server on a loopback port.
@Suite("AdminClient against kizuna serve")
struct AdminClientTests {
    @Test func appsRoundTripAndServerErrorsComeBackTyped() async throws {
        let port = try await LiveServer.run { server in
            let admin = server.admin
            let created = try await admin.createApp(
                NewApp(id: "my-app", name: "My App", platform: .ios, bundleId: "com.example.app", teamId: "ABCDE12345"))
            #expect(try await admin.app(id: "my-app") == created)
            let updated = try await admin.updateApp(id: "my-app", AppPatch(name: "Renamed", storeURL: .set("https://apps.apple.com/app/id1")))
            #expect(updated.name == "Renamed" && updated.storeURL == "https://apps.apple.com/app/id1")
            #expect(try await admin.apps().map(\.id) == ["my-app"])

            let invalid = await #expect(throws: KizunaError.self) {
                _ = try await admin.createApp(NewApp(id: "Nope", name: "", platform: .ios, bundleId: "x"))
            }
            #expect(invalid?.code == .validationFailed && (invalid?.details.count ?? 0) >= 4)
            let unauthorized = await #expect(throws: KizunaError.self) { _ = try await AdminClient(server: server.url, token: "kza_bad").apps() }
            #expect(unauthorized?.code == .unauthorized)

            try await admin.deleteApp(id: "my-app")
            let missing = await #expect(throws: KizunaError.self) { _ = try await admin.app(id: "my-app") }
            #expect(missing?.code == .notFound)
            return server.port
        }
        // After the server drained, nothing listens on its port any more: the client reports a transport error.
        let unreachable = await #expect(throws: KizunaError.self) {
            _ = try await AdminClient(server: URL(string: "http://127.0.0.1:\(port)")!, token: "t").apps()
        }
        #expect(unreachable?.code == .transport)
    }
}
