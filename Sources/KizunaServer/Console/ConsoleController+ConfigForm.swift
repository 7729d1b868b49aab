import Foundation
import HTTPTypes
import Hummingbird
import KizunaCore

/// The remote config template as a form (``ConfigTemplateForm``), published through `config:publish` against the
/// version it started from, like the JSON editor: the admin API's refusals land at the cells their JSON paths name, and
/// a version published meanwhile is explained with its changes while the form is kept.
extension ConsoleController {
    func addConfigFormRoutes(to root: RouterGroup<KizunaRequestContext>) {
        root.get("/console/apps/{app}/config/form", use: signedIn(configFormPage))
        root.post("/console/apps/{app}/config/form", use: signedIn(publishConfigForm))
    }

    @Sendable func configFormPage(_ request: Request, context: KizunaRequestContext, session: ConsoleSession) async throws -> Response {
        guard let app = try await findApp(try context.parameters.require("app"), session, context) else { return notFound(request, session) }
        let live = try await liveDocument(.config, app, session, context)
        let form = ConfigTemplateForm(template: live.document, base: live.version)
        return Self.html(ConsoleConfigFormPages.page(Self.frame(request, session, section: .apps), app: app, live: live, form: form))
    }

    @Sendable func publishConfigForm(_ request: Request, context: KizunaRequestContext, session: ConsoleSession) async throws -> Response {
        let posted = try await request.form([String: String].self, context: context)
        if let refusal = refusal(request, context, session, csrf: posted["csrf"]) { return refusal }
        guard let app = try await findApp(try context.parameters.require("app"), session, context) else { return notFound(request, session) }
        let frame = Self.frame(request, session, section: .apps)
        var form = ConfigTemplateForm(posted: posted)
        let (template, problems) = form.template(frame.text)
        guard let template else {
            let live = try await liveDocument(.config, app, session, context)
            return Self.html(ConsoleConfigFormPages.page(frame, app: app, live: live, form: form, problems: problems), status: .badRequest)
        }
        let outcome = try await publishForm(.config, app: app, document: template, message: form.message, base: form.base, session, context)
        switch outcome {
        case .published(let redirect): return redirect
        case .conflict(let live, let conflict):
            form.base = live.version  // publishing again replaces what is live now, knowingly
            return Self.html(ConsoleConfigFormPages.page(frame, app: app, live: live, form: form, conflict: conflict), status: .preconditionFailed)
        case .refused(let live, let details, let status):
            let refused = details.map { ConsolePages.Problem(field: $0.field.flatMap(form.field(ofPath:)), message: $0.message) }
            return Self.html(ConsoleConfigFormPages.page(frame, app: app, live: live, form: form, problems: refused), status: status)
        }
    }

    /// What publishing a form's document came to.
    enum FormPublish {
        /// Published: the redirect to the document's page.
        case published(Response)
        /// Someone published meanwhile: the live version and its changes since the form's base.
        case conflict(PublishedDocument, ConsoleConfigPages.Conflict)
        /// Refused: the admin API's problems, each with its JSON path.
        case refused(PublishedDocument, [KizunaError.Detail], HTTPResponse.Status)
    }

    /// Publishes `document` as `kind` through the admin API against `base`, as the config and gate forms do.
    func publishForm(
        _ kind: DocumentKind, app: AppRecord, document: JSONValue, message: String, base: Int64, _ session: ConsoleSession,
        _ context: KizunaRequestContext
    ) async throws -> FormPublish {
        let message = message.trimmingCharacters(in: .whitespacesAndNewlines)
        let answer = try await api.call(
            .post, "\(Self.appPath(app.id))/\(kind.rawValue):publish",
            json: PublishRequest(document: document, message: message.isEmpty ? nil : message),
            headers: [.ifMatch: "\"\(base)\""], as: session.token, context: context)
        guard let error = answer.error else { return .published(Self.redirect("\(ConsoleConfigPages.path(kind, app: app))?notice=published")) }
        let live = try await liveDocument(kind, app, session, context)
        if error.code == .preconditionFailed { return .conflict(live, try await conflict(kind, app, from: base, live: live, session, context)) }
        let details =
            error.details.isEmpty ? [KizunaError.Detail(code: error.code.rawValue, message: error.message, field: error.field)] : error.details
        return .refused(live, details, answer.status)
    }
}
