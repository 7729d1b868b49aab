import Foundation
import HTTPTypes
import Hummingbird
import KizunaCore

/// The update gate's policy as a form (``GatePolicyForm``), published through `gate:publish` against the version it
/// started from: the admin API's refusals land at the fields their JSON paths name, and a version published meanwhile
/// is explained with its changes while the form is kept.
extension ConsoleController {
    func addGateFormRoutes(to root: RouterGroup<KizunaRequestContext>) {
        root.get("/console/apps/{app}/gate/form", use: signedIn(gateFormPage))
        root.post("/console/apps/{app}/gate/form", use: signedIn(publishGateForm))
    }

    @Sendable func gateFormPage(_ request: Request, context: KizunaRequestContext, session: ConsoleSession) async throws -> Response {
        guard let app = try await findApp(try context.parameters.require("app"), session, context) else { return notFound(request, session) }
        let live = try await liveDocument(.gate, app, session, context)
        let form = GatePolicyForm(policy: live.document, base: live.version)
        return Self.html(ConsoleGateFormPages.page(Self.frame(request, session, section: .apps), app: app, live: live, form: form))
    }

    @Sendable func publishGateForm(_ request: Request, context: KizunaRequestContext, session: ConsoleSession) async throws -> Response {
        let posted = try await request.form([String: String].self, context: context)
        if let refusal = refusal(request, context, session, csrf: posted["csrf"]) { return refusal }
        guard let app = try await findApp(try context.parameters.require("app"), session, context) else { return notFound(request, session) }
        let frame = Self.frame(request, session, section: .apps)
        var form = GatePolicyForm(posted: posted)
        let (policy, problems) = form.policy(frame.text)
        guard let policy else {
            let live = try await liveDocument(.gate, app, session, context)
            return Self.html(ConsoleGateFormPages.page(frame, app: app, live: live, form: form, problems: problems), status: .badRequest)
        }
        let outcome = try await publishForm(.gate, app: app, document: policy, message: form.message, base: form.base, session, context)
        switch outcome {
        case .published(let redirect): return redirect
        case .conflict(let live, let conflict):
            form.base = live.version  // publishing again replaces what is live now, knowingly
            return Self.html(ConsoleGateFormPages.page(frame, app: app, live: live, form: form, conflict: conflict), status: .preconditionFailed)
        case .refused(let live, let details, let status):
            let refused = details.map { detail in
                let field = detail.field.flatMap(form.field(ofPath:))
                return ConsolePages.Problem(
                    field: field, message: "\(field.map { GatePolicyForm.label($0, frame.text) } ?? "policy"): \(detail.message)")
            }
            return Self.html(ConsoleGateFormPages.page(frame, app: app, live: live, form: form, problems: refused), status: status)
        }
    }
}
