import Foundation
import GraphQL
import HTTPTypes
import Hummingbird
import KizunaCore
import Logging

/// `POST /v1/apps/{app}/graphql`: GraphQL over HTTP (JSON), served from the app's live data schema.
///
/// The caller is a session (`Authorization: Bearer`), an API key of the app (`X-Api-Key`), both, or neither; the
/// rule engine decides per model and operation. Errors follow the GraphQL spec, each with a stable
/// `extensions.code`. A request over a limit (``GraphQLLimits``) is refused before any of it runs, with
/// `limit_exceeded` and the limit in `extensions.limit`.
struct GraphQLController: Sendable {
    let schemas: LiveDataSchemas
    let accounts: AccountService
    let groups: any UserGroupRepository
    let keys: any APIKeyRepository
    let limits: GraphQLLimits

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
            caller = try await self.caller(request, app: app, needsGroups: runtime.usesGroups)
        } catch let error as KizunaError {
            // A credential that does not hold: answered in GraphQL's shape, with its HTTP status (401).
            let object: JSONValue = ["errors": [["message": .string(error.message), "extensions": ["code": .string(error.code.rawValue)]]]]
            return try .json(object, status: ErrorMiddleware.status(for: error.code))
        }
        let schema = try runtime.schema()

        let given = body.variables?.objectValue ?? [:]
        // Nothing runs unless the whole document is admitted: a refused batch of mutations writes nothing.
        let admission = limits.admit(body.query, operationName: body.operationName, variables: given, schema: schema)
        guard case .admitted(let document, _) = admission else {
            return try answer(GraphQLResult(errors: admission.errors), notes: nil, context: context)
        }
        var variables: [String: Map] = [:]
        for (name, value) in given { variables[name] = DataRecords.map(value) }
        let notes = RequestNotes()
        let result = try await GraphQL.execute(
            schema: schema, documentAST: document, rootValue: (), context: DataRequest(caller: caller, notes: notes), variableValues: variables,
            operationName: body.operationName)
        return try answer(result, notes: notes, context: context)
    }

    /// Who is asking: a session, an API key, both or neither. A credential that is presented must be valid.
    /// Groups are read only when a rule of the schema asks for them: most requests need no second store read.
    private func caller(_ request: Request, app: String, needsGroups: Bool) async throws -> DataCaller {
        var caller = DataCaller()
        if let token = request.bearerToken {
            let session = try await accounts.authenticate(token)
            caller.userId = session.account.id
            if needsGroups { caller.groups = Set(try await groups.groups(of: session.account.id)) }
        }
        if let key = request.headers[.apiKey] {
            _ = try await keys.authenticate(app: app, key: key)
            caller.hasAPIKey = true
        }
        return caller
    }

    /// The GraphQL answer as JSON: `data`, `errors` (each with `extensions.code`), and the request's own
    /// `extensions` (such as filters on unindexed fields).
    private func answer(_ result: GraphQLResult, notes: RequestNotes?, context: KizunaRequestContext) throws -> Response {
        var body: [String: JSONValue] = [:]
        if let data = result.data { body["data"] = DataRecords.json(data) }
        if !result.errors.isEmpty { body["errors"] = .array(try result.errors.map { try Self.error($0, context: context) }) }
        if let extensions = notes?.extensions { body["extensions"] = extensions }
        return try .json(JSONValue.object(body))
    }

    private static func error(_ error: GraphQLError, context: KizunaRequestContext) throws -> JSONValue {
        var object = try JSONDecoder().decode(JSONValue.self, from: try JSONEncoder().encode(error)).objectValue ?? [:]
        switch error.originalError {
        case let kizuna as KizunaError:
            object["message"] = .string(kizuna.message)
            var extensions: [String: JSONValue] = ["code": .string(kizuna.code.rawValue)]
            if let field = kizuna.field { extensions["field"] = .string(field) }
            if !kizuna.details.isEmpty {
                extensions["details"] = try JSONDecoder().decode(JSONValue.self, from: try JSONEncoder().encode(kizuna.details))
            }
            object["extensions"] = .object(extensions)
        case .some(let other):
            // Never internals in an answer: the log has them, with the request id.
            context.logger.error("A data resolver failed", metadata: ["error": "\(String(reflecting: other))"])
            object["message"] = .string("The server could not answer this field; the log has the details (request \(context.id)).")
            object["extensions"] = .object(["code": .string(KizunaError.Code.internalError.rawValue)])
        case nil:
            // The document itself: a syntax or validation error, or a limit (with its `limit`, `maximum` and `actual`).
            var extensions = object["extensions"]?.objectValue ?? [:]
            if extensions["code"] == nil { extensions["code"] = .string(KizunaError.Code.validationFailed.rawValue) }
            object["extensions"] = .object(extensions)
        }
        return .object(object)
    }
}
