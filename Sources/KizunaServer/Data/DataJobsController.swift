import Foundation
import HTTPTypes
import Hummingbird
import KizunaCore

/// The jobs data schema publishes left, for operators: `GET /v1/admin/apps/{app}/schema/jobs`.
///
/// Its own controller rather than a route of ``DataController``: it reads the job queue, not the live GraphQL API.
struct DataJobsController: Sendable {
    let queue: DataJobQueue
    /// An unknown app is 404, not an empty list.
    let apps: any AppRepository

    func addAdminRoutes(to admin: RouterGroup<KizunaRequestContext>) {
        admin.get("/apps/{app}/schema/jobs", use: list)
    }

    /// The app's jobs, newest first, a page at a time (`?limit`, `?before`): state, progress, attempts, last error.
    @Sendable func list(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let app = try context.parameters.path("app")
        let limit = try request.uri.queryParameters.int("limit", default: 50, in: 1...300)
        let before = try request.uri.queryParameters.optionalInt("before")
        guard try await apps.find(id: app) != nil else { throw KizunaError.noSuchApp(app) }
        let jobs = try await queue.list(app: app, before: before, limit: limit)
        return try .json(DataJobList(jobs: jobs.map(\.info)), headers: [.cacheControl: "no-store"])
    }
}
