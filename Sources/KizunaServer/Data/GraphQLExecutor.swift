import Foundation
import GraphQL
import HTTPTypes
import Hummingbird
import KizunaCore
import Logging

/// Runs one GraphQL document against an app's live data API for one caller, and answers it as GraphQL over HTTP:
/// what the app's endpoint (``GraphQLController``) and the operator's (``DataController``) share, so both parse, limit,
/// validate, run and report errors the same way.
///
/// The answer is 200 with `data`, `errors` (each with a stable `extensions.code`) and the request's own
/// `extensions`. A document that does not parse, breaks a limit or fails validation never runs.
struct GraphQLExecutor: Sendable {
    let limits: GraphQLLimits

    /// Runs `query` as `caller` on the app's live schema, answered as GraphQL over HTTP (200 with the JSON of
    /// ``result(query:variables:operationName:on:caller:logger:reference:)``).
    /// - Parameters:
    ///   - variables: The values of the document's variables, as the request's JSON gave them.
    ///   - operationName: The operation to run, when the document has several.
    ///   - context: The request's context, for the log and the request id an internal error names.
    func answer(
        query: String, variables: [String: JSONValue], operationName: String?, on runtime: DataRuntime, caller: DataCaller,
        context: KizunaRequestContext
    ) async throws -> Response {
        let body = try await result(
            query: query, variables: variables, operationName: operationName, on: runtime, caller: caller, logger: context.logger,
            reference: "request \(context.id)")
        // Nothing was answered because the store could not be reached: the same typed 503 and Retry-After as every other
        // endpoint, so a client (and a load balancer) backs off instead of reading a failure as final.
        if let errors = body["errors"]?.arrayValue, !errors.isEmpty,
            errors.allSatisfy({ $0["extensions"]?["code"] == .string(KizunaError.Code.storeUnavailable.rawValue) })
        {
            return .json(body, status: .serviceUnavailable, headers: [.retryAfter: String(StoreFailure.retryAfter)])
        }
        return .json(body)
    }

    /// Runs `query` as `caller` on the app's live schema and answers the GraphQL result as JSON: what a POST answers
    /// and what a graphql-transport-ws `next` carries.
    ///
    /// A request error (a document that does not parse, breaks a limit or fails validation, which never runs) is an
    /// answer with `errors` and no `data` member, as the GraphQL spec has it.
    /// - Parameters:
    ///   - variables: The values of the document's variables, as the request's JSON gave them.
    ///   - operationName: The operation to run, when the document has several.
    ///   - logger: Where an internal error is logged.
    ///   - reference: How the answer names the log line of an internal error (`request <id>`).
    func result(
        query: String, variables: [String: JSONValue], operationName: String?, on runtime: DataRuntime, caller: DataCaller,
        logger: Logger, reference: String
    ) async throws -> JSONValue {
        let schema = try runtime.schema()
        // Nothing runs unless the whole document is admitted: a refused batch of mutations writes nothing.
        let admission = limits.admit(query, operationName: operationName, variables: variables, schema: schema, cache: runtime.documents)
        guard case .admitted(let document, _) = admission else {
            return try json(GraphQLResult(errors: admission.errors), notes: nil, logger: logger, reference: reference)
        }
        let notes = RequestNotes()
        if let plan = runtime.plans.plan(query, operationName: operationName, document: document, data: runtime.data),
            let data = await plan.run(on: runtime, variables: variables, caller: caller, notes: notes)
        {
            // A FastQuery's answer: its data, and the request's `extensions`.
            var body: [String: JSONValue] = ["data": data]
            if let extensions = notes.extensions { body["extensions"] = extensions }
            return .object(body)
        }
        var runnable = document
        let rewritten = InputValueDeprecation.rewrite(document, source: query)
        if let rewritten { runnable = try parse(source: Source(body: rewritten, name: "GraphQL request")) }
        var values: [String: Map] = [:]
        for (name, value) in variables { values[name] = DataRecords.map(value) }
        let result = try await GraphQL.execute(
            schema: schema, documentAST: runnable, rootValue: (), context: DataRequest(caller: caller, notes: notes), variableValues: values,
            operationName: operationName)
        return try json(result, notes: notes, logger: logger, reference: reference, restoring: rewritten != nil)
    }

    /// A credential that does not hold, answered in GraphQL's shape with its HTTP status (401), so a GraphQL client
    /// reads it like any other error.
    static func refusal(_ error: KizunaError) throws -> Response {
        let object: JSONValue = ["errors": [["message": .string(error.message), "extensions": ["code": .string(error.code.rawValue)]]]]
        var headers = HTTPFields()
        if let retryAfter = error.retryAfter { headers[.retryAfter] = String(retryAfter) }
        return .json(object, status: ErrorResponder.status(for: error.code), headers: headers)
    }

    /// What a request the store could not answer is told: `store_unavailable`, 503, retry after a few seconds.
    static let storeUnavailable = KizunaError(
        .storeUnavailable, "The server cannot reach its store right now; retry in a few seconds.", retryAfter: StoreFailure.retryAfter)

    /// The GraphQL answer as JSON: `data`, `errors` (each with `extensions.code`), and the request's own
    /// `extensions` (such as filters on unindexed fields).
    private func json(_ result: GraphQLResult, notes: RequestNotes?, logger: Logger, reference: String, restoring: Bool = false) throws -> JSONValue {
        var body: [String: JSONValue] = [:]
        if let data = result.data { body["data"] = restoring ? InputValueDeprecation.restore(DataRecords.json(data)) : DataRecords.json(data) }
        if !result.errors.isEmpty {
            body["errors"] = .array(
                try result.errors.map { error in
                    try Self.json(error) { other in
                        // Never internals in an answer: the log has them, with the request id.
                        logger.error("A data resolver failed", metadata: ["error": "\(String(reflecting: other))"])
                        return "The server could not answer this field; the log has the details (\(reference))."
                    }
                })
        }
        if let extensions = notes?.extensions { body["extensions"] = extensions }
        return .object(body)
    }

    /// A GraphQL error as JSON, as every data API answer (over HTTP, or a subscription's `next` and `error`) carries
    /// it: a Kizuna error's own message and `extensions` (`code`, `field`, `details`), a conflict's `current` record,
    /// and `validation_failed` for a document's syntax or validation errors.
    /// - Parameter unexpected: Called with an error that is none of Kizuna's (a bug, a failed read), to log it; returns
    ///   the message shown in its place, with code `internal_error`.
    static func json(_ error: GraphQLError, unexpected: (any Error) -> String) throws -> JSONValue {
        var object = try JSONValue(parsing: try JSONEncoder().encode(error)).objectValue ?? [:]
        switch error.originalError {
        case let kizuna as KizunaError:
            object["message"] = .string(kizuna.message)
            object["extensions"] = .object(try extensions(of: kizuna))
        case let conflict as DataConflict:
            object["message"] = .string(conflict.error.message)
            var extensions = try extensions(of: conflict.error)
            if let current = conflict.current { extensions["current"] = current }
            object["extensions"] = .object(extensions)
        case .some(let other) where StoreFailure.isUnreachable(other):
            object["message"] = .string(storeUnavailable.message)
            object["extensions"] = ["code": .string(KizunaError.Code.storeUnavailable.rawValue)]
        case .some(let other):
            object["message"] = .string(unexpected(other))
            object["extensions"] = .object(["code": .string(KizunaError.Code.internalError.rawValue)])
        case nil:
            // The document itself: a syntax or validation error, or a limit (with its `limit`, `maximum` and `actual`).
            var extensions = object["extensions"]?.objectValue ?? [:]
            if extensions["code"] == nil { extensions["code"] = .string(KizunaError.Code.validationFailed.rawValue) }
            object["extensions"] = .object(extensions)
        }
        return .object(object)
    }

    /// A Kizuna error's `extensions`: its code, and the field and details when it has them.
    private static func extensions(of error: KizunaError) throws -> [String: JSONValue] {
        var extensions: [String: JSONValue] = ["code": .string(error.code.rawValue)]
        if let field = error.field { extensions["field"] = .string(field) }
        if !error.details.isEmpty {
            extensions["details"] = try JSONValue(parsing: try JSONEncoder().encode(error.details))
        }
        return extensions
    }
}
