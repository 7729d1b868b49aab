import HTTPTypes
import Hummingbird
import KizunaCore
import Logging

/// The apps registry over HTTP: admin CRUD under `/v1/admin/apps`, and a public read at `/v1/apps/{app}`.
struct AppsController: Sendable {
    let repository: any AppRepository
    /// For what the database's cascade cannot reach when an app is removed (the release artifacts' bytes): called
    /// before, it answers what to run once the app is gone.
    var onDelete: @Sendable (String) async throws -> @Sendable () async -> Void = { _ in {} }

    func addAdminRoutes(to admin: RouterGroup<KizunaRequestContext>) {
        admin.post("/apps", use: create)
        admin.get("/apps", use: list)
        admin.get("/apps/{app}", use: show)
        admin.patch("/apps/{app}", use: update)
        admin.delete("/apps/{app}", use: delete)
    }

    func addPublicRoutes(to v1: RouterGroup<KizunaRequestContext>) {
        v1.get("/apps/{app}", use: publicInfo)
    }

    @Sendable func create(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let record = try await repository.create(try await request.decode(as: NewApp.self, context: context))
        context.logger.notice("App registered", metadata: ["app": "\(record.id)"])
        return try .json(record, status: .created, headers: [.location: "/v1/admin/apps/\(record.id)"])
    }

    @Sendable func list(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        try .json(AppList(apps: try await repository.list()))
    }

    @Sendable func show(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        try .json(try await find(context))
    }

    @Sendable func update(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let patch = try await request.decode(as: AppPatch.self, context: context)
        return try .json(try await repository.update(id: try context.parameters.path("app"), applying: patch))
    }

    @Sendable func delete(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let id = try await repository.require(try context.parameters.path("app")).id
        let afterwards = try await onDelete(id)
        try await repository.delete(id: id)
        await afterwards()
        context.logger.notice("App removed", metadata: ["app": "\(id)"])
        return .empty()
    }

    /// What anyone may read about an app (a web page showing its store link, say).
    @Sendable func publicInfo(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        try .json(AppInfo(try await find(context)), headers: [.cacheControl: "public, max-age=60"])
    }

    private func find(_ context: KizunaRequestContext) async throws -> AppRecord {
        try await repository.require(try context.parameters.path("app"))
    }
}
