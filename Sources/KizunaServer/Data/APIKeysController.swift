import Foundation
import HTTPTypes
import Hummingbird
import KizunaCore
import Logging

/// An app's API keys for operators: `/v1/admin/apps/{app}/api-keys`.
struct APIKeysController: Sendable {
    let keys: any APIKeyRepository

    func addAdminRoutes(to admin: RouterGroup<KizunaRequestContext>) {
        admin.post("/apps/{app}/api-keys", use: create)
        admin.get("/apps/{app}/api-keys", use: list)
        admin.delete("/apps/{app}/api-keys/{key}", use: revoke)
    }

    /// A new key; its secret is in this answer only.
    @Sendable func create(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let app = try context.parameters.path("app")
        let created = try await keys.create(app: app, try await request.decode(as: NewAPIKey.self, context: context))
        context.logger.notice("API key created", metadata: ["app": "\(app)", "key": "\(created.info.id)"])
        return try .json(created, status: .created, headers: [.cacheControl: "no-store"])
    }

    @Sendable func list(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        try .json(APIKeyList(keys: try await keys.list(app: try context.parameters.path("app"))))
    }

    /// Revokes a key at once; it is kept in the list, marked revoked, so a caller that presents it learns why.
    @Sendable func revoke(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let app = try context.parameters.path("app")
        let revoked = try await keys.revoke(app: app, id: try context.parameters.path("key"))
        context.logger.notice("API key revoked", metadata: ["app": "\(app)", "key": "\(revoked.id)"])
        return try .json(revoked)
    }
}
