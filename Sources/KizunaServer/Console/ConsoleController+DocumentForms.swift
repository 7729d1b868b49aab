import Foundation
import HTTPTypes
import Hummingbird
import KizunaCore

/// A published document edited as a form: filled from the live version, read back from what was posted, shown as a
/// page. The remote config template (``ConfigTemplateForm``) and the update gate's policy (``GatePolicyForm``).
protocol ConsoleDocumentForm: SendableMetatype {
    static var kind: DocumentKind { get }
    init(document: JSONValue, base: Int64)
    init(posted: [String: String])
    var message: String { get }
    /// The version the form changes: what the publish's `If-Match` names.
    var base: Int64 { get set }
    /// The document the fields describe, or nil with the problems of the fields that do not read.
    func document(_ text: ConsoleText) -> (JSONValue?, [ConsolePages.Problem])
    /// An admin API refusal, at the field its JSON path names.
    func problem(_ detail: KizunaError.Detail, _ text: ConsoleText) -> ConsolePages.Problem
    static func page(
        _ frame: ConsolePages.Frame, app: AppRecord, live: PublishedDocument, form: Self, problems: [ConsolePages.Problem],
        conflict: ConsoleConfigPages.Conflict?
    ) -> String
}

/// Each document's form, published through `config:publish` or `gate:publish` against the version it started from,
/// like the JSON editor: the admin API's refusals land at the fields their JSON paths name, and a version published
/// meanwhile is explained with its changes while the form is kept.
extension ConsoleController {
    func addDocumentFormRoutes(to root: RouterGroup<KizunaRequestContext>) {
        addFormRoutes(ConfigTemplateForm.self, to: root)
        addFormRoutes(GatePolicyForm.self, to: root)
    }

    private func addFormRoutes<Form: ConsoleDocumentForm>(_ form: Form.Type, to root: RouterGroup<KizunaRequestContext>) {
        let path = RouterPath("/console/apps/{app}/\(Form.kind.rawValue)/form")
        root.get(path, use: signedIn { try await formPage(Form.self, $0, $1, $2) })
        root.post(path, use: signedIn { try await publishDocumentForm(Form.self, $0, $1, $2) })
    }

    private func formPage<Form: ConsoleDocumentForm>(
        _: Form.Type, _ request: Request, _ context: KizunaRequestContext, _ session: ConsoleSession
    ) async throws -> Response {
        guard let app = try await findApp(try context.parameters.require("app"), session, context) else { return notFound(request, session) }
        let live = try await liveDocument(Form.kind, app, session, context)
        let form = Form(document: live.document, base: live.version)
        return Self.html(Form.page(Self.frame(request, session, section: .apps), app: app, live: live, form: form, problems: [], conflict: nil))
    }

    private func publishDocumentForm<Form: ConsoleDocumentForm>(
        _: Form.Type, _ request: Request, _ context: KizunaRequestContext, _ session: ConsoleSession
    ) async throws -> Response {
        let posted = try await request.form([String: String].self, context: context)
        if let refusal = refusal(request, context, session, csrf: posted["csrf"]) { return refusal }
        guard let app = try await findApp(try context.parameters.require("app"), session, context) else { return notFound(request, session) }
        let frame = Self.frame(request, session, section: .apps)
        var form = Form(posted: posted)
        let (document, problems) = form.document(frame.text)
        guard let document else {
            let live = try await liveDocument(Form.kind, app, session, context)
            return Self.html(Form.page(frame, app: app, live: live, form: form, problems: problems, conflict: nil), status: .badRequest)
        }
        switch try await publishForm(Form.kind, app: app, document: document, message: form.message, base: form.base, session, context) {
        case .published(let redirect): return redirect
        case .conflict(let live, let conflict):
            form.base = live.version  // publishing again replaces what is live now, knowingly
            return Self.html(Form.page(frame, app: app, live: live, form: form, problems: [], conflict: conflict), status: .preconditionFailed)
        case .refused(let live, let details, let status):
            let refused = details.map { form.problem($0, frame.text) }
            return Self.html(Form.page(frame, app: app, live: live, form: form, problems: refused, conflict: nil), status: status)
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

extension ConfigTemplateForm: ConsoleDocumentForm {
    static var kind: DocumentKind { .config }

    func problem(_ detail: KizunaError.Detail, _ text: ConsoleText) -> ConsolePages.Problem {
        ConsolePages.Problem(field: detail.field.flatMap(field(ofPath:)), message: detail.message)
    }

    static func page(
        _ frame: ConsolePages.Frame, app: AppRecord, live: PublishedDocument, form: Self, problems: [ConsolePages.Problem],
        conflict: ConsoleConfigPages.Conflict?
    ) -> String {
        ConsoleConfigFormPages.page(frame, app: app, live: live, form: form, problems: problems, conflict: conflict)
    }
}

extension GatePolicyForm: ConsoleDocumentForm {
    static var kind: DocumentKind { .gate }

    func problem(_ detail: KizunaError.Detail, _ text: ConsoleText) -> ConsolePages.Problem {
        let field = detail.field.flatMap(field(ofPath:))
        return ConsolePages.Problem(field: field, message: "\(field.map { Self.label($0, text) } ?? "policy"): \(detail.message)")
    }

    static func page(
        _ frame: ConsolePages.Frame, app: AppRecord, live: PublishedDocument, form: Self, problems: [ConsolePages.Problem],
        conflict: ConsoleConfigPages.Conflict?
    ) -> String {
        ConsoleGateFormPages.page(frame, app: app, live: live, form: form, problems: problems, conflict: conflict)
    }
}
