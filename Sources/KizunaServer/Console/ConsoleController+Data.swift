import Foundation
import HTTPTypes
import Hummingbird
import KizunaCore

/// An app's Data pages: the live schema with its history, a browser of any model's records (one filter, newest or
/// oldest first, keyset pages), and a record's form, saved with its `_version` so a change made meanwhile is shown
/// beside the operator's rather than overwritten. Every read and write is a GraphQL operation on the operator's
/// endpoint (`POST /v1/admin/apps/{app}/graphql`), the same generated API the SDK and `kizuna data query` use.
extension ConsoleController {
    func addDataRoutes(to root: RouterGroup<KizunaRequestContext>) {
        root.get("/console/apps/{app}/data", use: signedIn(dataPage))
        root.get("/console/apps/{app}/data/{model}", use: signedIn(modelPage))
        root.get("/console/apps/{app}/data/{model}/{id}", use: signedIn(recordPage))
        root.post("/console/apps/{app}/data/{model}/{id}", use: signedIn(saveRecord))
    }

    /// Records a page shows.
    static let recordsPerPage = 50

    @Sendable func dataPage(_ request: Request, context: KizunaRequestContext, session: ConsoleSession) async throws -> Response {
        guard let app = try await findApp(try context.parameters.require("app"), session, context) else { return notFound(request, session) }
        let live = try await liveDocument(.schema, app, session, context)
        let versions = try await api.call(.get, "\(Self.appPath(app.id))/schema/versions", as: session.token, context: context)
        if let error = versions.error { throw error }
        let schema = try DataSchema(sdl: SchemaDocument.sdl(in: live.document))
        let page = ConsoleDataPages.overview(
            Self.frame(request, session, section: .apps), app: app, live: live, schema: schema,
            history: try versions.decode(DocumentHistory.self).versions)
        return Self.html(page)
    }

    @Sendable func modelPage(_ request: Request, context: KizunaRequestContext, session: ConsoleSession) async throws -> Response {
        guard let (app, schema, model) = try await findModel(request, context, session) else { return notFound(request, session) }
        let query = ConsoleDataPages.Browse(request.uri.queryParameters)
        let frame = Self.frame(request, session, section: .apps)
        var problems: [ConsolePages.Problem] = []
        var variables: [String: JSONValue] = [
            "limit": .number(Double(Self.recordsPerPage)), "sortDirection": .string(query.newestFirst ? "DESC" : "ASC"),
        ]
        if let next = query.next { variables["nextToken"] = .string(next) }
        if let field = query.field.flatMap(model.field(named:)), !query.value.isEmpty {
            do {
                variables["filter"] = .object([
                    field.name: .object([query.op: try ConsoleDataPages.filterValue(query.value, of: field, op: query.op)])
                ])
            } catch {
                problems.append(ConsolePages.Problem(field: "value", message: "\(frame.text[.filterValueLabel]): \(error.message)"))
            }
        }
        var records: [JSONValue] = []
        var next: String?
        if problems.isEmpty {
            let names = ClientNames(model: model.name)
            let document = """
                query($filter: Model\(model.name)FilterInput, $sortDirection: ModelSortDirection, $limit: Int, $nextToken: String) {
                  \(names.list)(filter: $filter, sortDirection: $sortDirection, limit: $limit, nextToken: $nextToken) {
                    items { \(ConsoleDataPages.selection(model)) } nextToken } }
                """
            let answer = try await graphQL(app, document, variables, session, context)
            problems = Self.graphQLProblems(answer, fieldPrefix: "")
            records = answer["data"]?[names.list]?["items"]?.arrayValue ?? []
            next = answer["data"]?[names.list]?["nextToken"]?.stringValue
        }
        let page = ConsoleDataPages.browse(
            frame, app: app, schema: schema, model: model, query: query, records: records, next: next, problems: problems)
        return Self.html(page, status: problems.isEmpty ? .ok : .badRequest)
    }

    @Sendable func recordPage(_ request: Request, context: KizunaRequestContext, session: ConsoleSession) async throws -> Response {
        guard let (app, schema, model) = try await findModel(request, context, session) else { return notFound(request, session) }
        guard let record = try await findRecord(app, model, try context.parameters.require("id"), session, context) else {
            return notFound(request, session)
        }
        let frame = Self.frame(request, session, section: .apps)
        let form = ConsoleDataPages.RecordForm(record: record, model: model)
        return Self.html(
            ConsoleDataPages.record(
                frame, app: app, schema: schema, model: model, stored: record, form: form, notice: Self.notice(request, frame.text)))
    }

    /// Saves the form as an update at the version it was read at; a record changed meanwhile is a conflict shown
    /// with both versions, the operator's values kept and now based on the stored version (saving again replaces it,
    /// knowingly).
    @Sendable func saveRecord(_ request: Request, context: KizunaRequestContext, session: ConsoleSession) async throws -> Response {
        let posted = try await request.form([String: String].self, context: context)
        if let refusal = refusal(request, context, session, csrf: posted["csrf"]) { return refusal }
        guard let (app, schema, model) = try await findModel(request, context, session) else { return notFound(request, session) }
        let id = try context.parameters.require("id")
        guard let stored = try await findRecord(app, model, id, session, context) else { return notFound(request, session) }
        let frame = Self.frame(request, session, section: .apps)
        var form = ConsoleDataPages.RecordForm(posted: posted, model: model)
        let again = { (form: ConsoleDataPages.RecordForm, problems: [ConsolePages.Problem], conflict: JSONValue?, status: HTTPResponse.Status) in
            Self.html(
                ConsoleDataPages.record(
                    frame, app: app, schema: schema, model: model, stored: stored, form: form, problems: problems, conflict: conflict), status: status
            )
        }
        let (input, problems) = form.input(id: id, model: model)
        guard let input else { return again(form, problems, nil, .badRequest) }
        let names = ClientNames(model: model.name)
        let document = """
            mutation($input: Update\(model.name)Input!) { \(names.update)(input: $input) { \(ConsoleDataPages.selection(model)) } }
            """
        let answer = try await graphQL(app, document, ["input": .object(input)], session, context)
        guard let error = answer["errors"]?.arrayValue?.first else {
            return Self.redirect("\(ConsoleDataPages.recordPath(app, model, id))?notice=saved")
        }
        if error["extensions"]?["code"]?.stringValue == KizunaError.Code.conflict.rawValue, let current = error["extensions"]?["current"] {
            form.version = current["_version"].flatMap { $0.numberValue.map { Int64($0) } } ?? form.version
            return again(form, [], current, .conflict)
        }
        return again(form, Self.graphQLProblems(answer, fieldPrefix: "field-"), nil, .badRequest)
    }

    // MARK: Helpers

    /// Runs a GraphQL operation as the operator and answers its JSON (`data`, `errors`); a store outage throws.
    private func graphQL(
        _ app: AppRecord, _ document: String, _ variables: [String: JSONValue], _ session: ConsoleSession, _ context: KizunaRequestContext
    ) async throws -> JSONValue {
        let answer = try await api.call(
            .post, "\(Self.appPath(app.id))/graphql", json: DataQueryRequest(query: document, variables: variables), as: session.token,
            context: context)
        if let error = answer.error { throw error }
        return try answer.json()
    }

    /// The answer's GraphQL errors, at the form field each names (`input.text` is `field-text`).
    private static func graphQLProblems(_ answer: JSONValue, fieldPrefix: String) -> [ConsolePages.Problem] {
        (answer["errors"]?.arrayValue ?? []).map { error in
            let path = error["extensions"]?["field"]?.stringValue
            let field = path.map { $0.hasPrefix("input.") ? String($0.dropFirst(6)) : $0 }.map { fieldPrefix + $0 }
            return ConsolePages.Problem(field: fieldPrefix.isEmpty ? nil : field, message: error["message"]?.stringValue ?? "")
        }
    }

    private func findModel(
        _ request: Request, _ context: KizunaRequestContext, _ session: ConsoleSession
    ) async throws -> (AppRecord, DataSchema, DataModel)? {
        guard let app = try await findApp(try context.parameters.require("app"), session, context) else { return nil }
        let live = try await liveDocument(.schema, app, session, context)
        let schema = try DataSchema(sdl: SchemaDocument.sdl(in: live.document))
        guard let model = schema.model(named: try context.parameters.require("model")) else { return nil }
        return (app, schema, model)
    }

    private func findRecord(
        _ app: AppRecord, _ model: DataModel, _ id: String, _ session: ConsoleSession, _ context: KizunaRequestContext
    ) async throws -> JSONValue? {
        let names = ClientNames(model: model.name)
        let document = "query($id: ID!) { \(names.get)(id: $id) { \(ConsoleDataPages.selection(model)) } }"
        let answer = try await graphQL(app, document, ["id": .string(id)], session, context)
        if let message = answer["errors"]?.arrayValue?.first?["message"]?.stringValue { throw KizunaError(.badRequest, message) }
        guard let record = answer["data"]?[names.get], record != .null else { return nil }
        return record
    }
}
