import Foundation
import HTTPTypes
import Hummingbird
import KizunaCore
import Logging

/// `POST /v1/apps/{app}/graphql`: GraphQL over HTTP (JSON), served from the app's live data schema.
///
/// The caller is a session (`Authorization: Bearer`), an API key of the app (`X-Api-Key`), both, or neither; the
/// rule engine decides per model and operation. Errors follow the GraphQL spec, each with a stable
/// `extensions.code`. Documents deeper or with more aliases than the limits are refused before they run.
struct GraphQLController: Sendable {
    let schemas: LiveDataSchemas
    let callers: DataCallers
    let executor: GraphQLExecutor

    func addRoutes(to v1: RouterGroup<KizunaRequestContext>) {
        v1.post("/apps/{app}/graphql", use: execute)
    }

    /// The body of a GraphQL-over-HTTP request.
    struct Body: Decodable {
        var query: String
        var variables: JSONValue?
        var operationName: String?
    }

    @Sendable func execute(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let app = try context.parameters.path("app")
        let body = try await request.decode(as: Body.self, context: context)
        let runtime = try await schemas.runtime(app)  // not_found for an unknown app
        let caller: DataCaller
        do {
            caller = try await callers.caller(
                token: request.bearerToken, apiKey: request.headers[.apiKey], app: app, needsGroups: runtime.usesGroups)
        } catch let error as KizunaError {
            return try GraphQLExecutor.refusal(error)
        } catch  where StoreFailure.isUnreachable(error) {
            context.logger.warning("The store cannot be reached", metadata: ["error": "\(String(reflecting: error))"])
            return try GraphQLExecutor.refusal(GraphQLExecutor.storeUnavailable)
        }
        return try await executor.answer(
            query: body.query, variables: body.variables?.objectValue ?? [:], operationName: body.operationName, on: runtime, caller: caller,
            context: context)
    }
}
