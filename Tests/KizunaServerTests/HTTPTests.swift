import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import KizunaCore
import SQLKit
import Synchronization
import Testing

@testable import KizunaServer

@Suite("HTTP API")
struct HTTPTests {
    static let app = #"{"id":"my-app","name":"My App","platform":"ios","bundleId":"com.example.app","teamId":"ABCDE12345"}"#

    @Test(arguments: TestBackend.available)
    func appsLifecycleThroughTheAdminAPI(_ backend: TestBackend) async throws {
        try await withTestServer(backend) { server in
            let created = try await server.send(.post, "/v1/admin/apps", json: Self.app)
            #expect(created.status == .created)
            #expect(created.headers[.location] == "/v1/admin/apps/my-app")
            #expect(try created.decode(AppRecord.self).appleAppID == "ABCDE12345.com.example.app")

            let list = try await server.send(.get, "/v1/admin/apps")
            #expect(try list.decode(AppList.self).apps.map(\.id) == ["my-app"])

            let patched = try await server.send(
                .patch, "/v1/admin/apps/my-app", json: #"{"name":"Renamed","storeURL":"https://apps.apple.com/app/id1"}"#)
            #expect(patched.status == .ok)
            #expect(try patched.decode(AppRecord.self).name == "Renamed")
            let cleared = try await server.send(.patch, "/v1/admin/apps/my-app", json: #"{"storeURL":null}"#)
            #expect(try cleared.decode(AppRecord.self).storeURL == nil)

            let publicView = try await server.send(.get, "/v1/apps/my-app", authorized: false)
            #expect(publicView.status == .ok)
            #expect(publicView.text.contains("teamId") == false)
            #expect(try publicView.decode(AppInfo.self).name == "Renamed")

            #expect(try await server.send(.delete, "/v1/admin/apps/my-app").status == .noContent)
            let gone = try await server.send(.get, "/v1/admin/apps/my-app")
            #expect(gone.status == .notFound && gone.error?.code == .notFound)
        }
    }

    @Test func adminRoutesNeedAValidToken() async throws {
        try await withTestServer { server in
            let missing = try await server.send(.get, "/v1/admin/apps", authorized: false)
            #expect(missing.status == .unauthorized && missing.error?.code == .unauthorized)
            #expect(missing.headers[.wwwAuthenticate]?.hasPrefix("Bearer") == true)

            let wrongSecret = server.adminToken.dropLast(4) + "AAAA"
            let wrong = try await server.send(.get, "/v1/admin/apps", headers: [.authorization: "Bearer \(wrongSecret)"])
            #expect(wrong.status == .unauthorized)
            let garbage = try await server.send(.get, "/v1/admin/apps", headers: [.authorization: "Basic Zm9vOmJhcg=="])
            #expect(garbage.status == .unauthorized)

            // A revoked token stops working at once.
            let tokens = AdminTokenSQLRepository(database: server.database)
            let (token, credential) = try await tokens.create(name: "short-lived")
            #expect(try await server.send(.get, "/v1/admin/apps", headers: [.authorization: "Bearer \(credential.token)"]).status == .ok)
            _ = try await tokens.revoke(id: token.id)
            #expect(try await server.send(.get, "/v1/admin/apps", headers: [.authorization: "Bearer \(credential.token)"]).status == .unauthorized)
        }
    }

    @Test func errorsUseOneShapeWithStableCodes() async throws {
        try await withTestServer(configure: { $0.maxBodySize = 4096 }) { server in
            let unknown = try await server.send(.get, "/v1/nothing-here")
            #expect(unknown.status == .notFound && unknown.error?.code == .notFound)

            let wrongMethod = try await server.send(.put, "/v1/admin/apps/my-app", json: "{}")
            #expect(wrongMethod.status == .methodNotAllowed && wrongMethod.error?.code == .methodNotAllowed)
            #expect(wrongMethod.headers[.allow] == "GET, PATCH, DELETE")

            let tooLarge = try await server.send(.post, "/v1/admin/apps", json: String(repeating: " ", count: 5000) + Self.app)
            #expect(tooLarge.status == .contentTooLarge && tooLarge.error?.code == .payloadTooLarge)

            let notJSON = try await server.send(.post, "/v1/admin/apps", json: #"{"id": "#)
            #expect(notJSON.status == .badRequest && notJSON.error?.field == "$")

            let wrongType = try await server.send(.post, "/v1/admin/apps", json: #"{"id":"a1","name":7,"platform":"ios","bundleId":"a.b"}"#)
            #expect(wrongType.error?.code == .badRequest && wrongType.error?.field == "$.name")

            let missing = try await server.send(.post, "/v1/admin/apps", json: #"{"id":"a1","platform":"ios","bundleId":"a.b"}"#)
            #expect(missing.error?.field == "$.name")

            let badPlatform = try await server.send(.post, "/v1/admin/apps", json: #"{"id":"a1","name":"A","platform":"symbian","bundleId":"a.b"}"#)
            #expect(badPlatform.error?.field == "$.platform")

            let invalid = try await server.send(
                .post, "/v1/admin/apps",
                json: #"{"id":"Bad Id","name":" ","platform":"ios","bundleId":"nodots","teamId":"abc","storeURL":"http://x"}"#)
            #expect(invalid.status == .badRequest && invalid.error?.code == .validationFailed)
            #expect(Set(invalid.error?.details.compactMap(\.field) ?? []) == ["id", "name", "bundleId", "teamId", "storeURL"])

            #expect(unknown.headers[.requestID]?.isEmpty == false)
        }
    }

    @Test func errorCodesMapToStatusesInOnePlace() {
        #expect(ErrorResponder.status(for: .validationFailed) == .badRequest)
        #expect(ErrorResponder.status(for: .payloadTooLarge) == .contentTooLarge)
        #expect(ErrorResponder.status(for: .storeTooNew) == .serviceUnavailable)
        #expect(ErrorResponder.status(for: "some_future_code") == .internalServerError)
        let response = ErrorResponder.response(for: KizunaError(.conflict, "taken"))
        #expect(response.status == .conflict && response.headers[.contentType] == "application/json; charset=utf-8")
    }

    /// A stored row that no longer decodes is the server's fault: 500, with neither the column nor the value in the body.
    @Test func internalFailuresAnswer500WithoutInternals() async throws {
        try await withTestServer { server in
            try await server.database.raw(
                "INSERT INTO apps VALUES ('broken', 'Broken', 'symbian', 'com.example.b', NULL, NULL, 0, 0, 'com.example.b')"
            ).run()
            let response = try await server.send(.get, "/v1/admin/apps")
            #expect(response.status == .internalServerError && response.error?.code == .internalError)
            #expect(response.error?.field == nil)
            #expect(!response.text.contains("symbian") && !response.text.contains("platform"))
            let requestID = try #require(response.headers[.requestID])
            #expect(response.error?.message.contains(requestID) == true)
        }
    }

    @Test func failedStartUpIsReportedWithoutInternals() async throws {
        struct DriverError: Error { let detail = "password=hunter2 host=db.internal" }
        let failing = MigrationStep(version: CoreMigrations.all.count + 1, name: "fails", work: .schema { _ in throw DriverError() })
        try await withTestServer(configure: { $0.migrations = CoreMigrations.all + [failing] }, waitUntilReady: false) { server in
            guard case .failed = await server.readiness.settled() else {
                Issue.record("start-up should have failed")
                return
            }
            let ready = try await server.send(.get, "/health/ready", authorized: false)
            #expect(ready.status == .serviceUnavailable)
            #expect(try ready.decode(OperationsController.ReadyBody.self).status == "failed")
            #expect(!ready.text.contains("hunter2") && !ready.text.contains("DriverError"))
            let api = try await server.send(.get, "/v1/admin/apps")
            #expect(api.status == .serviceUnavailable && !api.text.contains("hunter2"))
        }
    }

    @Test func healthMetricsAndOpenAPIAreServed() async throws {
        try await withTestServer { server in
            #expect(try await server.send(.get, "/health/live", authorized: false).status == .ok)
            let ready = try await server.send(.get, "/health/ready", authorized: false)
            #expect(try ready.decode(OperationsController.ReadyBody.self).status == "ready")
            try await server.send(.get, "/v1/admin/apps")

            let metrics = try await server.send(.get, "/metrics", authorized: false)
            #expect(metrics.status == .ok)
            #expect(metrics.text.contains(#"hb_requests{http_route="/v1/admin/apps",http_request_method="GET",http_response_status_code="200"}"#))
            #expect(metrics.text.contains(#"http_server_request_duration_bucket{http_route="/v1/admin/apps""#))
            #expect(metrics.text.contains("kizuna_db_connections_in_use"))

            let openapi = try await server.send(.get, "/openapi.yaml", authorized: false)
            #expect(openapi.status == .ok && openapi.text.hasPrefix("openapi: 3.1"))
        }
    }

    @Test(arguments: TestBackend.available)
    func pendingMigrationsServeHealthAndAnswer503UntilDone(_ backend: TestBackend) async throws {
        let gated = GatedMigration()
        try await withTestServer(backend, configure: { $0.migrations = gated.migrations }, waitUntilReady: false) { server in
            await gated.waitUntilHeld()
            #expect(try await server.send(.get, "/health/live", authorized: false).status == .ok)
            let ready = try await server.send(.get, "/health/ready", authorized: false)
            #expect(ready.status == .serviceUnavailable)
            let body = try ready.decode(OperationsController.ReadyBody.self)
            #expect(body.status == "migrating" && body.step == "\(CoreMigrations.all.count + 1) gated" && body.done == 1 && body.total == 2)
            let api = try await server.send(.get, "/v1/apps/anything", authorized: false)
            #expect(api.status == .serviceUnavailable && api.headers[.retryAfter] == "5" && api.error?.code == .unavailable)

            gated.open()
            #expect(await server.readiness.settled() == .ready)
            #expect(try await server.send(.get, "/health/ready", authorized: false).status == .ok)
            #expect(try await server.send(.get, "/v1/apps/anything", authorized: false).status == .notFound)
        }
    }
}
