import Foundation
import HTTPTypes
import Hummingbird
import KizunaCore

/// An app's API keys (what the data API's `public` rules admit): the list with each key's state, a new key shown
/// once on the answer that made it, and revoking one; through the admin API's `/v1/admin/apps/{app}/api-keys`.
extension ConsoleController {
    func addAPIKeyRoutes(to root: RouterGroup<KizunaRequestContext>) {
        root.get("/console/apps/{app}/api-keys", use: signedIn(apiKeysPage))
        root.post("/console/apps/{app}/api-keys", use: signedIn(createAPIKey))
        root.post("/console/apps/{app}/api-keys/{key}/revoke", use: signedIn(revokeAPIKey))
    }

    private struct APIKeyForm: Decodable {
        var csrf: String?
        var name: String?
        var expiresInDays: String?
    }

    @Sendable func apiKeysPage(_ request: Request, context: KizunaRequestContext, session: ConsoleSession) async throws -> Response {
        guard let app = try await findApp(try context.parameters.require("app"), session, context) else { return notFound(request, session) }
        return try await apiKeysPage(request, context, session, app: app, notice: Self.notice(request, Self.text(request)))
    }

    private func apiKeysPage(
        _ request: Request, _ context: KizunaRequestContext, _ session: ConsoleSession, app: AppRecord, created: CreatedAPIKey? = nil,
        form: (name: String, days: String) = ("", "90"), problems: [ConsolePages.Problem] = [], notice: String? = nil,
        status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let answer = try await api.call(.get, "\(Self.appPath(app.id))/api-keys", as: session.token, context: context)
        if let error = answer.error { throw error }
        let page = ConsoleAPIKeyPages.list(
            Self.frame(request, session, section: .apps), app: app, keys: try answer.decode(APIKeyList.self).keys, created: created, form: form,
            problems: problems, notice: notice)
        return Self.html(page, status: status)
    }

    /// Makes a key and shows it, once, on this answer (never cached); only its hash is kept.
    @Sendable func createAPIKey(_ request: Request, context: KizunaRequestContext, session: ConsoleSession) async throws -> Response {
        let form = try await request.form(APIKeyForm.self, context: context)
        if let refusal = refusal(request, context, session, csrf: form.csrf) { return refusal }
        guard let app = try await findApp(try context.parameters.require("app"), session, context) else { return notFound(request, session) }
        let typed = (name: form.name ?? "", days: form.expiresInDays ?? "")
        guard let days = Int(typed.days.trimmingCharacters(in: .whitespaces)) else {
            let text = Self.text(request)
            let problems = [ConsolePages.Problem(field: "expiresInDays", message: "\(text[.expiresInDaysLabel]): \(text[.wholeDaysNeeded])")]
            return try await apiKeysPage(request, context, session, app: app, form: typed, problems: problems, status: .badRequest)
        }
        let name = typed.name.trimmingCharacters(in: .whitespaces)
        let answer = try await api.call(
            .post, "\(Self.appPath(app.id))/api-keys", json: NewAPIKey(name: name.isEmpty ? nil : name, expiresInDays: days), as: session.token,
            context: context)
        if let error = answer.error {
            let text = Self.text(request)
            let problems = ConsolePages.problems(error) { field in
                field == "name" ? text[.keyNameLabel] : field == "expiresInDays" ? text[.expiresInDaysLabel] : nil
            }
            return try await apiKeysPage(request, context, session, app: app, form: typed, problems: problems, status: answer.status)
        }
        let created = try answer.decode(CreatedAPIKey.self)
        return try await apiKeysPage(request, context, session, app: app, created: created, status: .created)
    }

    @Sendable func revokeAPIKey(_ request: Request, context: KizunaRequestContext, session: ConsoleSession) async throws -> Response {
        let form = try await request.form(APIKeyForm.self, context: context)
        if let refusal = refusal(request, context, session, csrf: form.csrf) { return refusal }
        guard let app = try await findApp(try context.parameters.require("app"), session, context) else { return notFound(request, session) }
        let key = try context.parameters.require("key")
        let answer = try await api.call(.delete, "\(Self.appPath(app.id))/api-keys/\(Self.escapedSegment(key))", as: session.token, context: context)
        if answer.status == .notFound { return notFound(request, session) }
        if let error = answer.error { throw error }
        return Self.redirect("\(ConsoleAppPages.Tab.apiKeys.path(app))?notice=keyRevoked")
    }
}
