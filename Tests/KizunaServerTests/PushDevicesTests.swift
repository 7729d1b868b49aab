import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import SQLKit
import Testing

@testable import KizunaServer

/// `POST/DELETE /v1/apps/{app}/push/devices` over loopback, on SQLite and PostgreSQL: tokens in the forms apps send
/// them, normalized or refused saying why; a token that moves to another install; the user a session registers as;
/// a retired token revived by a new registration.
@Suite("Push device registry")
struct PushDevicesTests {
    static let hex = "70a7ff15c1233c44a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718"

    static func register(
        _ server: TestServer, install: String, token: String, environment: String = "production", extra: String = "",
        session: String? = nil, app: String = "my-app"
    ) async throws -> TestResponse {
        var headers: HTTPFields = [:]
        if let session { headers[.authorization] = "Bearer \(session)" }
        return try await server.send(
            .post, "/v1/apps/\(app)/push/devices",
            json: #"{"installId":"\#(install)","token":"\#(token)","environment":"\#(environment)"\#(extra)}"#, headers: headers, authorized: false)
    }

    static func stored(_ server: TestServer, _ install: String) async throws -> PushDevice? {
        try await PushDeviceRepository(database: server.database).device(app: "my-app", installId: install)
    }

    @Test(arguments: TestBackend.available)
    func tokensAreNormalizedOrRefusedSayingWhy(_ backend: TestBackend) async throws {
        try await withTestServer(backend) { server in
            _ = try await server.send(.post, "/v1/admin/apps", json: HTTPTests.app)
            let legacy = "<70a7ff15 c1233c44 a1b2c3d4 e5f60718 293a4b5c 6d7e8f90 a1b2c3d4 e5f60718>"
            let registered = try await Self.register(
                server, install: "i1", token: legacy, extra: #","appVersion":"2.1.0","locale":"ja-JP","timeZone":"Asia/Tokyo""#)
            #expect(registered.status == .ok)
            let device = try registered.decode(PushDevice.self)
            #expect(device.token == Self.hex && device.environment == .production && device.userId == nil)
            #expect(device.appVersion == "2.1.0" && device.locale == "ja-JP" && device.timeZone == "Asia/Tokyo")
            #expect(try await Self.stored(server, "i1") == device)

            let truncated = try await Self.register(server, install: "i1", token: "{length = 32, bytes = 0x70a7ff15 c1233c44 ... e5f60718 }")
            #expect(truncated.status == .badRequest && truncated.error?.code == .validationFailed && truncated.error?.field == "token")
            #expect(truncated.error?.message.contains(#"String(format: "%02x", $0)"#) == true)
            #expect(try await Self.register(server, install: "i1", token: "xyz").error?.field == "token")
            #expect(try await Self.register(server, install: "i1", token: Self.hex, environment: "staging").status == .badRequest)
            let zone = try await Self.register(server, install: "i1", token: Self.hex, extra: #","timeZone":"Mars/Olympus""#)
            #expect(zone.error?.field == "timeZone")
            #expect(try await Self.register(server, install: "i1", token: Self.hex, app: "nope").status == .notFound)
            // Nothing refused changed what was stored.
            #expect(try await Self.stored(server, "i1") == device)
        }
    }

    @Test(arguments: TestBackend.available)
    func aTokenFollowsItsLatestRegistrationAndASessionNamesTheUser(_ backend: TestBackend) async throws {
        try await withTestServer(backend) { server in
            _ = try await server.send(.post, "/v1/admin/apps", json: HTTPTests.app)
            let mio = try await GraphQLEndpointTests.signUp(server, "mio@example.com")
            #expect(try await Self.register(server, install: "old-phone", token: Self.hex).status == .ok)

            // The same token from another install (a restored backup), registered as Mio: it moves there.
            let moved = try await Self.register(server, install: "new-phone", token: Self.hex.uppercased(), session: mio.token)
            #expect(try moved.decode(PushDevice.self).userId == mio.id)
            #expect(try await Self.stored(server, "old-phone") == nil)
            #expect(try await Self.stored(server, "new-phone")?.userId == mio.id)

            // A session that is sent must be valid: not registered as nobody instead.
            let forged = try await Self.register(server, install: "new-phone", token: Self.hex, session: "kzs_forged")
            #expect(forged.status == .unauthorized)
            #expect(try await Self.stored(server, "new-phone")?.userId == mio.id)

            // APNs retired the token; the app registers it again: it is live again.
            try await server.database.raw("UPDATE push_devices SET retired_at = 1 WHERE install_id = 'new-phone'").run()
            _ = try await Self.register(server, install: "new-phone", token: Self.hex, session: mio.token)
            let retired = try await server.database.raw("SELECT retired_at FROM push_devices WHERE install_id = 'new-phone'").first()
            #expect(try retired?.decode(column: "retired_at", as: Int64?.self) == nil)

            #expect(try await server.send(.delete, "/v1/apps/my-app/push/devices/new-phone", authorized: false).status == .noContent)
            #expect(try await server.send(.delete, "/v1/apps/my-app/push/devices/new-phone", authorized: false).status == .notFound)
            #expect(try await Self.stored(server, "new-phone") == nil)
        }
    }

    @Test(arguments: TestBackend.available)
    func signingOutUnlinksTheUserFromThatInstallOnly(_ backend: TestBackend) async throws {
        try await withTestServer(backend) { server in
            _ = try await server.send(.post, "/v1/admin/apps", json: HTTPTests.app)
            func session(_ route: String, install: String) async throws -> SessionGrant {
                let device = #""device":{"appId":"my-app","installId":"\#(install)"}"#
                return try await server.send(
                    .post, "/v1/auth/\(route)", json: #"{"identifier":"mio@example.com","password":"correct horse battery",\#(device)}"#,
                    authorized: false
                ).decode(SessionGrant.self)
            }
            let phone = try await session("sign-up", install: "phone")
            let tablet = try await session("sign-in", install: "tablet")
            let other = String(repeating: "ab", count: 32)
            _ = try await Self.register(server, install: "phone", token: Self.hex, session: phone.session.accessToken)
            _ = try await Self.register(server, install: "tablet", token: other, session: tablet.session.accessToken)

            var headers: HTTPFields = [:]
            headers[.authorization] = "Bearer \(phone.session.accessToken)"
            #expect(try await server.send(.post, "/v1/auth/sign-out", headers: headers, authorized: false).status.kind == .successful)
            #expect(try await Self.stored(server, "phone")?.userId == nil)
            #expect(try await Self.stored(server, "phone")?.token == Self.hex)  // still registered, as nobody
            #expect(try await Self.stored(server, "tablet")?.userId == phone.account.id)

            // Everywhere: the tablet too.
            headers[.authorization] = "Bearer \(tablet.session.accessToken)"
            _ = try await server.send(.post, "/v1/auth/sign-out", json: #"{"everywhere":true}"#, headers: headers, authorized: false)
            #expect(try await Self.stored(server, "tablet")?.userId == nil)
        }
    }
}
