import HTTPTypes
import Hummingbird
import KizunaCore
import Logging

/// The apps registry over HTTP: admin CRUD under `/v1/admin/apps`, and a public read at `/v1/apps/{app}`.
struct AppsController {
    let repository: any AppRepository

    func addAdminRoutes(to routes: RouteBuilder) {
        routes.post("/apps") { request, context in
            let record = try await repository.create(try await request.decode(as: NewApp.self, context: context))
            context.logger.notice("App registered", metadata: ["app": "\(record.id)"])
            return try .json(record, status: .created, headers: [.location: "/v1/admin/apps/\(record.id)"])
        }
        routes.get("/apps") { _, _ in
            try .json(AppList(apps: try await repository.list()))
        }
        routes.get("/apps/{app}") { _, context in
            try .json(try await find(context))
        }
        routes.patch("/apps/{app}") { request, context in
            let patch = try await request.decode(as: AppPatch.self, context: context)
            return try .json(try await repository.update(id: try context.parameters.path("app"), applying: patch))
        }
        routes.delete("/apps/{app}") { _, context in
            let id = try context.parameters.path("app")
            try await repository.delete(id: id)
            context.logger.notice("App removed", metadata: ["app": "\(id)"])
            return .empty()
        }
    }

    func addPublicRoutes(to routes: RouteBuilder) {
        routes.get("/apps/{app}") { _, context in
            try .json(AppInfo(try await find(context)), headers: [.cacheControl: "public, max-age=60"])
        }
    }

    private func find(_ context: KizunaRequestContext) async throws -> AppRecord {
        let id = try context.parameters.path("app")
        guard let app = try await repository.find(id: id) else {
            throw KizunaError.noSuchApp(id)
        }
        return app
    }
}
