import Foundation
import HTTPTypes
import Hummingbird
import KizunaCore

/// The console's Remote config and Update gate sections for an app, the same for both documents: the live version,
/// publishing a new one against the version the editor started from (a concurrent publish is explained with its
/// changes, and the draft kept), the history with rollback, and the diff of any two versions — each through the admin
/// API's `/v1/admin/apps/{app}/config…` or `/gate…` routes.
extension ConsoleController {
    func addDocumentRoutes(to root: RouterGroup<KizunaRequestContext>) {
        for kind in [DocumentKind.config, .gate] {
            let base = "/console/apps/{app}/\(kind.rawValue)"
            root.get(RouterPath(base), use: signedIn { try await documentPage($0, $1, $2, kind) })
            root.post(RouterPath(base), use: signedIn { try await publishDocument($0, $1, $2, kind) })
            root.post(RouterPath("\(base)/rollback"), use: signedIn { try await rollbackDocument($0, $1, $2, kind) })
            root.get(RouterPath("\(base)/diff"), use: signedIn { try await documentDiff($0, $1, $2, kind) })
        }
    }

    private struct PublishForm: Decodable {
        var csrf: String?
        var base: Int64?
        var document: String?
        var message: String?
    }

    private struct RollbackForm: Decodable {
        var csrf: String?
        var base: Int64?
        var version: Int64?
    }

    func documentPage(_ request: Request, _ context: KizunaRequestContext, _ session: ConsoleSession, _ kind: DocumentKind) async throws -> Response {
        guard let app = try await findApp(try context.parameters.require("app"), session, context) else { return notFound(request, session) }
        let live = try await liveDocument(kind, app, session, context)
        let draft = ConsoleConfigPages.Draft(text: ConsoleConfigPages.text(of: live.document, pretty: true), message: "", base: live.version)
        let notice = Self.notice(request, Self.text(request))
        return try await documentPage(request, context, session, kind: kind, app: app, live: live, draft: draft, notice: notice)
    }

    private func documentPage(
        _ request: Request, _ context: KizunaRequestContext, _ session: ConsoleSession, kind: DocumentKind, app: AppRecord,
        live: PublishedDocument,
        draft: ConsoleConfigPages.Draft, problems: [ConsolePages.Problem] = [], conflict: ConsoleConfigPages.Conflict? = nil,
        notice: String? = nil, status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let answer = try await api.call(.get, "\(Self.appPath(app.id))/\(kind.rawValue)/versions?limit=20", as: session.token, context: context)
        if let error = answer.error { throw error }
        let history = try answer.decode(DocumentHistory.self).versions
        let page = ConsoleConfigPages.page(
            Self.frame(request, session, section: .apps), kind: kind, app: app, live: live, history: history, draft: draft, problems: problems,
            conflict: conflict, notice: notice)
        return Self.html(page, status: status)
    }

    /// Publishes the editor's template against the version it started from.
    func publishDocument(
        _ request: Request, _ context: KizunaRequestContext, _ session: ConsoleSession, _ kind: DocumentKind
    ) async throws -> Response {
        let form = try await request.form(PublishForm.self, context: context)
        if let refusal = refusal(request, context, session, csrf: form.csrf) { return refusal }
        guard let app = try await findApp(try context.parameters.require("app"), session, context) else { return notFound(request, session) }
        let text = Self.text(request)
        let base = form.base ?? 0
        var draft = ConsoleConfigPages.Draft(text: form.document ?? "", message: form.message ?? "", base: base)
        let document: JSONValue
        do {
            document = try JSONValue(parsing: draft.text)
        } catch {
            let live = try await liveDocument(kind, app, session, context)
            let problems = [ConsolePages.Problem(field: "document", message: "\(text[.notJSON]): \(Self.describe(error, in: draft.text))")]
            return try await documentPage(
                request, context, session, kind: kind, app: app, live: live, draft: draft, problems: problems, status: .badRequest)
        }
        let message = draft.message.trimmingCharacters(in: .whitespacesAndNewlines)
        let answer = try await api.call(
            .post, "\(Self.appPath(app.id))/\(kind.rawValue):publish",
            json: PublishRequest(document: document, message: message.isEmpty ? nil : message),
            headers: [.ifMatch: "\"\(base)\""], as: session.token, context: context)
        guard let error = answer.error else { return Self.redirect("\(ConsoleConfigPages.path(kind, app: app))?notice=published") }
        let live = try await liveDocument(kind, app, session, context)
        if error.code == .preconditionFailed {
            let conflict = try await conflict(kind, app, from: base, live: live, session, context)
            draft.base = live.version  // publishing again replaces what is live now, knowingly
            return try await documentPage(
                request, context, session, kind: kind, app: app, live: live, draft: draft, conflict: conflict, status: answer.status)
        }
        return try await documentPage(
            request, context, session, kind: kind, app: app, live: live, draft: draft, problems: Self.documentProblems(error), status: answer.status)
    }

    /// Publishes a kept version again, if nothing was published since the page showed the history.
    func rollbackDocument(
        _ request: Request, _ context: KizunaRequestContext, _ session: ConsoleSession, _ kind: DocumentKind
    ) async throws -> Response {
        let form = try await request.form(RollbackForm.self, context: context)
        if let refusal = refusal(request, context, session, csrf: form.csrf) { return refusal }
        guard let app = try await findApp(try context.parameters.require("app"), session, context) else { return notFound(request, session) }
        let base = form.base ?? 0
        let answer = try await api.call(
            .post, "\(Self.appPath(app.id))/\(kind.rawValue):rollback", json: RollbackRequest(version: form.version ?? 0, message: nil),
            headers: [.ifMatch: "\"\(base)\""], as: session.token, context: context)
        guard let error = answer.error else { return Self.redirect("\(ConsoleConfigPages.path(kind, app: app))?notice=rolledBack") }
        let live = try await liveDocument(kind, app, session, context)
        let draft = ConsoleConfigPages.Draft(text: ConsoleConfigPages.text(of: live.document, pretty: true), message: "", base: live.version)
        let conflict = error.code == .preconditionFailed ? try await conflict(kind, app, from: base, live: live, session, context) : nil
        let problems = conflict == nil ? [ConsolePages.Problem(field: nil, message: error.message)] : []
        return try await documentPage(
            request, context, session, kind: kind, app: app, live: live, draft: draft, problems: problems, conflict: conflict, status: answer.status)
    }

    /// The changes between two versions (`?from=N&to=M`; `to` defaults to the live version).
    func documentDiff(_ request: Request, _ context: KizunaRequestContext, _ session: ConsoleSession, _ kind: DocumentKind) async throws -> Response {
        guard let app = try await findApp(try context.parameters.require("app"), session, context) else { return notFound(request, session) }
        var query = "from=\(Self.escapedSegment(request.uri.queryParameters["from"].map(String.init) ?? ""))"
        if let to = request.uri.queryParameters["to"] { query += "&to=\(Self.escapedSegment(String(to)))" }
        let answer = try await api.call(.get, "\(Self.appPath(app.id))/\(kind.rawValue):diff?\(query)", as: session.token, context: context)
        let frame = Self.frame(request, session, section: .apps)
        if let error = answer.error {
            let body = #"<p role="alert" class="problem">\#(ConsolePages.escape(error.message))</p>"#
            return Self.html(ConsolePages.page(frame, title: frame.text[.diffTitle], body: body), status: answer.status)
        }
        return Self.html(ConsoleConfigPages.diff(frame, kind: kind, app: app, diff: try answer.decode(DocumentDiff.self)))
    }

    // MARK: Helpers

    func liveDocument(
        _ kind: DocumentKind, _ app: AppRecord, _ session: ConsoleSession, _ context: KizunaRequestContext
    ) async throws -> PublishedDocument {
        let answer = try await api.call(.get, "\(Self.appPath(app.id))/\(kind.rawValue)", as: session.token, context: context)
        if let error = answer.error { throw error }
        return try answer.decode(PublishedDocument.self)
    }

    /// What was published since `base`, for a refused publish or rollback.
    func conflict(
        _ kind: DocumentKind, _ app: AppRecord, from base: Int64, live: PublishedDocument, _ session: ConsoleSession, _ context: KizunaRequestContext
    ) async throws -> ConsoleConfigPages.Conflict {
        let answer = try await api.call(.get, "\(Self.appPath(app.id))/\(kind.rawValue):diff?from=\(base)", as: session.token, context: context)
        let changes = answer.isSuccess ? try answer.decode(DocumentDiff.self).changes : []
        let info = DocumentVersionInfo(
            version: live.version, author: live.author, message: live.message, rollbackOf: live.rollbackOf, publishedAt: live.publishedAt)
        return ConsoleConfigPages.Conflict(current: info, changes: changes)
    }

    /// A refused document's problems, all at its editor (`field`), each with the JSON path it names.
    static func documentProblems(_ error: KizunaError, field: String = "document") -> [ConsolePages.Problem] {
        let details =
            error.details.isEmpty ? [KizunaError.Detail(code: error.code.rawValue, message: error.message, field: error.field)] : error.details
        return details.map { detail in
            var path = detail.field ?? ""
            if path.hasPrefix("$.document") { path = "$" + path.dropFirst("$.document".count) }
            return ConsolePages.Problem(field: field, message: path.isEmpty ? detail.message : "\(path): \(detail.message)")
        }
    }

    /// A JSON parse error in words, with where it is when Foundation says.
    private static func describe(_ error: any Error, in text: String) -> String {
        (error as? JSONValue.ParseError)?.description(in: text) ?? "\(error)"
    }
}
