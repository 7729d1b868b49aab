import Foundation
import HTTPTypes
import Hummingbird
import KizunaCore

/// The console's associated-domain settings for an app (universal links, Password AutoFill, App Clips), through
/// `/v1/admin/apps/{app}/associated-domains`, beside the apple-app-site-association file the server serves for every
/// app and its size against the 128 KB iOS reads.
extension ConsoleController {
    func addDomainRoutes(to root: RouterGroup<KizunaRequestContext>) {
        root.get("/console/apps/{app}/associated-domains", use: signedIn(domainsPage))
        root.post("/console/apps/{app}/associated-domains", use: signedIn(saveDomains))
    }

    private struct DomainsForm: Decodable {
        var csrf: String?
        var settings: String?
    }

    @Sendable func domainsPage(_ request: Request, context: KizunaRequestContext, session: ConsoleSession) async throws -> Response {
        guard let app = try await findApp(try context.parameters.require("app"), session, context) else { return notFound(request, session) }
        let answer = try await api.call(.get, "\(Self.appPath(app.id))/associated-domains", as: session.token, context: context)
        if let error = answer.error { throw error }
        let settings = try answer.json()
        let notice = request.uri.queryParameters["notice"] == "saved" ? Self.text(request)[.saved] : nil
        return try await domainsPage(request, context, session, app: app, draft: ConsoleConfigPages.text(of: settings, pretty: true), notice: notice)
    }

    private func domainsPage(
        _ request: Request, _ context: KizunaRequestContext, _ session: ConsoleSession, app: AppRecord, draft: String,
        problems: [ConsolePages.Problem] = [], notice: String? = nil, status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let served = try await api.call(.get, "/.well-known/apple-app-site-association", as: session.token, context: context)
        let file = served.isSuccess ? String(buffer: served.body) : ""
        let pretty = (try? JSONValue(parsing: file)).map { ConsoleConfigPages.text(of: $0, pretty: true) } ?? file
        let page = ConsoleDomainPages.page(
            Self.frame(request, session, section: .apps), app: app, draft: draft, problems: problems, servedFile: pretty,
            servedBytes: served.body.readableBytes, notice: notice)
        return Self.html(page, status: status)
    }

    /// Replaces the app's settings with the editor's JSON; the previous ones stay when refused.
    @Sendable func saveDomains(_ request: Request, context: KizunaRequestContext, session: ConsoleSession) async throws -> Response {
        let form = try await request.form(DomainsForm.self, context: context)
        if let refusal = refusal(request, context, session, csrf: form.csrf) { return refusal }
        guard let app = try await findApp(try context.parameters.require("app"), session, context) else { return notFound(request, session) }
        let draft = form.settings ?? ""
        guard let settings = try? JSONValue(parsing: draft) else {
            let problems = [ConsolePages.Problem(field: "settings", message: Self.text(request)[.notJSONGeneric])]
            return try await domainsPage(request, context, session, app: app, draft: draft, problems: problems, status: .badRequest)
        }
        let answer = try await api.call(.put, "\(Self.appPath(app.id))/associated-domains", json: settings, as: session.token, context: context)
        guard let error = answer.error else {
            return Self.redirect("/console/apps/\(Self.escapedSegment(app.id))/associated-domains?notice=saved")
        }
        let problems = Self.documentProblems(error, field: "settings")
        return try await domainsPage(request, context, session, app: app, draft: draft, problems: problems, status: answer.status)
    }
}

/// The associated-domains page.
enum ConsoleDomainPages {
    static func page(
        _ frame: ConsolePages.Frame, app: AppRecord, draft: String, problems: [ConsolePages.Problem], servedFile: String, servedBytes: Int,
        notice: String?
    ) -> String {
        let text = frame.text
        let limit = AppSiteAssociation.maximumBytes
        let percent = Int((Double(servedBytes) / Double(limit) * 100).rounded())
        let size = text.sizeOf(bytes: servedBytes, limit: limit, percent: percent)
        let body = """
            \(ConsoleAppPages.tabs(text, app: app, current: .domains))
            <form method="post" action="/console/apps/\(ConsoleController.escapedSegment(app.id))/associated-domains" class="panel">
            \(ConsolePages.csrfField(frame.csrf))
            \(ConsolePages.summary(text, problems))
            \(ConsolePages.textArea("settings", label: text[.domainSettingsLabel], value: draft, problems: problems, hint: text[.domainSettingsHint], rows: 14, extra: #"spellcheck="false" class="mono""#))
            <button type="submit">\(escape(text[.saveButton]))</button>
            </form>
            <h2 id="served">\(escape(text[.servedFileTitle]))</h2>
            <p class="hint">\(escape(text[.servedFileHint]))</p>
            <p><label for="size">\(escape(text[.fileSize]))</label>
            <meter id="size" min="0" max="\(limit)" low="\(limit * 3 / 4)" high="\(limit * 9 / 10)" optimum="0" value="\(servedBytes)">\(escape(size))</meter>
            <span id="size-text">\(escape(size))</span></p>
            <pre class="panel mono" aria-labelledby="served" tabindex="0">\(escape(servedFile))</pre>
            """
        return ConsolePages.page(frame, title: "\(text[.domainsTitle]): \(app.name)", notice: notice, body: body)
    }

    private static func escape(_ text: String) -> String {
        ConsolePages.escape(text)
    }
}
