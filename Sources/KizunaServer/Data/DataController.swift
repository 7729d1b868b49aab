import Foundation
import GraphQL
import HTTPTypes
import Hummingbird
import KizunaCore
import Logging

/// The data API's operator routes: the GraphQL API an app's live schema generates, as SDL, and GraphQL documents run
/// against the app's records by an operator (`kizuna data query`).
struct DataController: Sendable {
    let schemas: LiveDataSchemas
    let accounts: AccountService
    let groups: any UserGroupRepository
    let executor: GraphQLExecutor

    func addAdminRoutes(to admin: RouterGroup<KizunaRequestContext>) {
        admin.get("/apps/{app}/schema.graphql", use: clientSDL)
        admin.post("/apps/{app}/graphql", use: query)
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

    /// A GraphQL document run on the app's live schema exactly as the app's endpoint runs it (same limits, same
    /// answer), as the operator, whom every rule lets in, or as the account `asUser` names, with its groups.
    @Sendable func query(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let app = try context.parameters.path("app")
        let body = try await request.decode(as: DataQueryRequest.self, context: context)
        let runtime = try await schemas.runtime(app)  // not_found for an unknown app
        let caller = try await self.caller(asUser: body.asUser)
        // Reading an app's records past its rules, or as one of its users, is worth a line in the log.
        context.logger.notice("Data queried by an operator", metadata: ["app": "\(app)", "asUser": "\(caller.userId ?? "-")"])
        return try await executor.answer(
            query: body.query, variables: body.variables ?? [:], operationName: body.operationName, on: runtime, caller: caller, context: context)
    }

    /// The operator, or the account `reference` (an id or an identifier, as `kizuna user` takes it) with its groups.
    /// An empty or unknown reference is `not_found`, never the operator.
    private func caller(asUser reference: String?) async throws -> DataCaller {
        guard let reference else { return DataCaller(isOperator: true) }
        guard let user = try await accounts.findUser(reference) else {
            throw KizunaError(.notFound, "There is no account '\(reference)' to run the query as.", field: "asUser")
        }
        return DataCaller(userId: user.id, groups: Set(try await groups.groups(of: user.id)), hasAPIKey: false)
    }
}
