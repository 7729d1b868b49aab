import Foundation
import HTTPTypes
import Hummingbird
import KizunaCore

/// The data API's routes. For now the operator's: the GraphQL API an app's live schema generates, as SDL.
struct DataController: Sendable {
    let documents: any DocumentRepository
    let apps: any AppRepository

    func addAdminRoutes(to admin: RouterGroup<KizunaRequestContext>) {
        admin.get("/apps/{app}/schema.graphql", use: clientSDL)
    }

    /// The generated API of the live data schema, as GraphQL SDL: what an app's codegen (Apollo iOS, Amplify's)
    /// reads, and what people read to see the queries a model gets.
    @Sendable func clientSDL(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let app = try context.parameters.path("app")
        guard try await apps.find(id: app) != nil else { throw KizunaError.noSuchApp(app) }
        let live = try await documents.current(app: app, kind: .schema)
        let schema = try DataSchema(sdl: try SchemaDocument.sdl(in: live.document))
        return .bytes(
            Array(try ClientSchema(schema).sdl.utf8), contentType: "text/plain; charset=utf-8",
            headers: [.eTag: live.etag, .cacheControl: "no-store"])
    }
}
