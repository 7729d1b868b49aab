import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import SQLKit
import Testing

@testable import KizunaServer

/// What the data API's rules check besides sessions: an app's API keys (for `public` rules) and accounts' groups.
@Suite("Data access: API keys and groups")
struct DataAccessTests {
    @Test(arguments: TestBackend.available)
    func apiKeysExpireAndAreRevokedWithTheirOwnCodes(_ backend: TestBackend) async throws {
        try await withTestServer(backend) { server in
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            let other = #"{"id":"other","name":"Other","platform":"ios","bundleId":"com.example.other","teamId":"ABCDE12345"}"#
            #expect(try await server.send(.post, "/v1/admin/apps", json: other).status == .created)

            let tooLong = try await server.send(.post, "/v1/admin/apps/shop/api-keys", json: #"{"expiresInDays":366}"#)
            #expect(tooLong.status == .badRequest && tooLong.error?.details.first?.field == "$.expiresInDays")
            let response = try await server.send(.post, "/v1/admin/apps/shop/api-keys", json: #"{"name":"web","expiresInDays":30}"#)
            #expect(response.status == .created)
            let created = try response.decode(CreatedAPIKey.self)
            #expect(created.key.hasPrefix("kzk_\(created.info.id)_"))
            let listed = try await server.send(.get, "/v1/admin/apps/shop/api-keys").decode(APIKeyList.self)
            #expect(listed.keys.map(\.id) == [created.info.id] && listed.keys[0].name == "web")
            #expect(!(try await server.send(.get, "/v1/admin/apps/shop/api-keys").text.contains(created.key)))

            let keys = APIKeySQLRepository(database: server.database)
            let live = try await keys.authenticate(app: "shop", key: created.key)
            #expect(live.id == created.info.id)
            for (app, key) in [("other", created.key), ("shop", created.key + "x"), ("shop", "kzk_nothing"), ("shop", "")] {
                let error = await #expect(throws: KizunaError.self) { try await keys.authenticate(app: app, key: key) }
                #expect(error?.code == .unauthorized, "\(app) \(key)")
            }

            // Only its hash is stored.
            let stored = try await server.database.raw("SELECT secret_hash FROM api_keys").all()
            #expect(try stored.map { try $0.decode(column: "secret_hash", as: String.self) }.allSatisfy { !created.key.contains($0) })

            try await server.database.raw("UPDATE api_keys SET expires_at = 1").run()
            let expired = await #expect(throws: KizunaError.self) { try await keys.authenticate(app: "shop", key: created.key) }
            #expect(expired?.code == .apiKeyExpired)

            let revoked = try await server.send(.delete, "/v1/admin/apps/shop/api-keys/\(created.info.id)")
            let revokedKey = try revoked.decode(APIKeyInfo.self)
            #expect(revoked.status == .ok && revokedKey.revokedAt != nil)
            let refused = await #expect(throws: KizunaError.self) { try await keys.authenticate(app: "shop", key: created.key) }
            #expect(refused?.code == .apiKeyRevoked)
            #expect(try await server.send(.delete, "/v1/admin/apps/other/api-keys/\(created.info.id)").status == .notFound)
        }
    }

    @Test(arguments: TestBackend.available)
    func operatorsPutAccountsInGroups(_ backend: TestBackend) async throws {
        try await withTestServer(backend) { server in
            let signUp = try await server.send(
                .post, "/v1/auth/sign-up", json: #"{"identifier":"mio@example.com","password":"correct horse battery"}"#, authorized: false)
            #expect(signUp.status == .created, "\(signUp.text)")

            for _ in 0..<2 {
                let added = try await server.send(.put, "/v1/admin/users/mio@example.com/groups/moderators")
                #expect(try added.decode(UserGroups.self).groups == ["moderators"])
            }
            _ = try await server.send(.put, "/v1/admin/users/mio@example.com/groups/admins")
            #expect(try await server.send(.get, "/v1/admin/users/mio@example.com/groups").decode(UserGroups.self).groups == ["admins", "moderators"])
            let removed = try await server.send(.delete, "/v1/admin/users/mio@example.com/groups/moderators")
            #expect(try removed.decode(UserGroups.self).groups == ["admins"])

            let bad = try await server.send(.put, "/v1/admin/users/mio@example.com/groups/no%20spaces")
            #expect(bad.status == .badRequest && bad.error?.details.first?.field == "group")
            #expect(try await server.send(.put, "/v1/admin/users/nobody@example.com/groups/admins").status == .notFound)
        }
    }
}
