import Foundation
import GraphQL
import HTTPTypes
import Hummingbird
import KizunaCore

/// The data API's routes. For now the operator's: the GraphQL API an app's live schema generates, as SDL.
struct DataController: Sendable {
    let schemas: LiveDataSchemas

    func addAdminRoutes(to admin: RouterGroup<KizunaRequestContext>) {
        admin.get("/apps/{app}/schema.graphql", use: clientSDL)
    }

    /// The generated API of the live data schema, as GraphQL SDL: what an app's codegen (Apollo iOS, Amplify's)
    /// reads, and what people read to see the queries a model gets.
    @Sendable func clientSDL(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        // The schema the endpoint serves, printed: the same one, built once per version.
        let runtime = try await schemas.runtime(try context.parameters.path("app"))
        return .bytes(
            Array(printSchema(schema: try runtime.schema()).utf8), contentType: "text/plain; charset=utf-8",
            headers: [.eTag: ExpectedVersion.version(runtime.version).ifMatch, .cacheControl: "no-store"])
    }
}
