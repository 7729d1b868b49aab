import Foundation
import HTTPTypes
import Hummingbird
import KizunaCore

/// The console's Apps section: the registry's list, registering, editing and deleting an app, each through the admin
/// API's `/v1/admin/apps` routes.
extension ConsoleController {
    func addAppRoutes(to root: RouterGroup<KizunaRequestContext>) {
        root.get("/console/apps", use: signedIn(appsPage))
        root.post("/console/apps", use: signedIn(createApp))
        root.get("/console/apps/{app}", use: signedIn(appPage))
        root.post("/console/apps/{app}", use: signedIn(updateApp))
        root.get("/console/apps/{app}/delete", use: signedIn(deleteAppPage))
        root.post("/console/apps/{app}/delete", use: signedIn(deleteApp))
    }

    /// The app form's fields, as posted.
    struct AppForm: Decodable {
        var csrf: String?
        var id: String?
        var name: String?
        var platform: String?
        var bundleId: String?
        var teamId: String?
        var storeURL: String?

        /// The fields for the admin API: on creation an empty optional field is left out, on an edit it is cleared.
        func json(creating: Bool) -> JSONValue {
            var object: [String: JSONValue] = [:]
            if creating { object["id"] = .string(id ?? "") }
            object["name"] = .string(name ?? "")
            object["platform"] = .string(platform ?? "")
            object["bundleId"] = .string(bundleId ?? "")
            for (key, value) in [("teamId", teamId), ("storeURL", storeURL)] {
                let trimmed = value?.trimmingCharacters(in: .whitespaces) ?? ""
                if !trimmed.isEmpty {
                    object[key] = .string(trimmed)
                } else if !creating {
                    object[key] = .null
                }
            }
            return .object(object)
        }

        /// The form filled with `app`'s fields.
        init(_ app: AppRecord) {
            (id, name, platform, bundleId, teamId, storeURL) = (app.id, app.name, app.platform.rawValue, app.bundleId, app.teamId, app.storeURL)
        }
    }

    @Sendable func appsPage(_ request: Request, context: KizunaRequestContext, session: ConsoleSession) async throws -> Response {
        return try await appsPage(request, context, session, form: nil, problems: [])
    }

    private func appsPage(
        _ request: Request, _ context: KizunaRequestContext, _ session: ConsoleSession, form: AppForm?, problems: [ConsolePages.Problem],
        status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let answer = try await api.call(.get, "/v1/admin/apps", as: session.token, context: context)
        if let error = answer.error { throw error }
        let apps = try answer.decode(AppList.self).apps
        let frame = Self.frame(request, session, section: .apps)
        let notice = Self.notice(request, frame.text)
        return Self.html(ConsoleAppPages.list(frame, apps: apps, form: form, problems: problems, notice: notice), status: status)
    }

    @Sendable func createApp(_ request: Request, context: KizunaRequestContext, session: ConsoleSession) async throws -> Response {
        let form = try await request.form(AppForm.self, context: context)
        if let refusal = refusal(request, context, session, csrf: form.csrf) { return refusal }
        let answer = try await api.call(.post, "/v1/admin/apps", json: form.json(creating: true), as: session.token, context: context)
        guard let error = answer.error else { return Self.redirect("/console/apps?notice=created") }
        let text = Self.text(request)
        let problems = ConsolePages.problems(error, label: text.label(ofAppField:))
        return try await appsPage(request, context, session, form: form, problems: problems, status: answer.status)
    }

    @Sendable func appPage(_ request: Request, context: KizunaRequestContext, session: ConsoleSession) async throws -> Response {
        let id = try context.parameters.require("app")
        guard let app = try await findApp(id, session, context) else { return notFound(request, session) }
        return Self.html(
            ConsoleAppPages.edit(
                Self.frame(request, session, section: .apps), app: app, form: AppForm(app), notice: Self.notice(request, Self.text(request))))
    }

    @Sendable func updateApp(_ request: Request, context: KizunaRequestContext, session: ConsoleSession) async throws -> Response {
        let form = try await request.form(AppForm.self, context: context)
        if let refusal = refusal(request, context, session, csrf: form.csrf) { return refusal }
        let id = try context.parameters.require("app")
        let answer = try await api.call(.patch, Self.appPath(id), json: form.json(creating: false), as: session.token, context: context)
        guard let error = answer.error else { return Self.redirect("/console/apps/\(Self.escapedSegment(id))?notice=saved") }
        guard let app = try await findApp(id, session, context) else { return notFound(request, session) }
        let problems = ConsolePages.problems(error, label: Self.text(request).label(ofAppField:))
        let page = ConsoleAppPages.edit(Self.frame(request, session, section: .apps), app: app, form: form, problems: problems)
        return Self.html(page, status: answer.status)
    }

    private struct DeleteForm: Decodable {
        var csrf: String?
        var confirm: String?
    }

    @Sendable func deleteAppPage(_ request: Request, context: KizunaRequestContext, session: ConsoleSession) async throws -> Response {
        guard let app = try await findApp(try context.parameters.require("app"), session, context) else { return notFound(request, session) }
        return Self.html(ConsoleAppPages.delete(Self.frame(request, session, section: .apps), app: app))
    }

    /// Deletes the app once its id was typed to confirm.
    @Sendable func deleteApp(_ request: Request, context: KizunaRequestContext, session: ConsoleSession) async throws -> Response {
        let form = try await request.form(DeleteForm.self, context: context)
        if let refusal = refusal(request, context, session, csrf: form.csrf) { return refusal }
        let id = try context.parameters.require("app")
        guard let app = try await findApp(id, session, context) else { return notFound(request, session) }
        let frame = Self.frame(request, session, section: .apps)
        guard form.confirm?.trimmingCharacters(in: .whitespaces) == app.id else {
            let problems = [ConsolePages.Problem(field: "confirm", message: frame.text[.deleteMismatch])]
            return Self.html(ConsoleAppPages.delete(frame, app: app, typed: form.confirm ?? "", problems: problems), status: .unprocessableContent)
        }
        let answer = try await api.call(.delete, Self.appPath(app.id), as: session.token, context: context)
        if let error = answer.error {
            let problems = ConsolePages.problems(error, label: frame.text.label(ofAppField:))
            return Self.html(ConsoleAppPages.delete(frame, app: app, problems: problems), status: answer.status)
        }
        return Self.redirect("/console/apps?notice=deleted")
    }

    // MARK: Helpers

    /// The app as the admin API shows it, or nil when there is none.
    func findApp(_ id: String, _ session: ConsoleSession, _ context: KizunaRequestContext) async throws -> AppRecord? {
        let answer = try await api.call(.get, Self.appPath(id), as: session.token, context: context)
        if answer.status == .notFound { return nil }
        if let error = answer.error { throw error }
        return try answer.decode(AppRecord.self)
    }

    /// The page saying what was asked for is not there, linking back to `section`.
    func notFound(_ request: Request, _ session: ConsoleSession, section: ConsolePages.Section = .apps) -> Response {
        let frame = Self.frame(request, session, section: section)
        let (message, back) = (ConsolePages.escape(frame.text[.notFound]), ConsolePages.escape(section.title(frame.text)))
        let body = #"<p role="alert" class="problem">\#(message)</p><p><a href="\#(section.path)">\#(back)</a></p>"#
        return Self.html(ConsolePages.page(frame, title: frame.text[.notFound], body: body), status: .notFound)
    }

    static func appPath(_ id: String) -> String {
        "/v1/admin/apps/\(escapedSegment(id))"
    }

    /// `text` percent-encoded for one path segment.
    static func escapedSegment(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    /// RFC 3986's unreserved characters, made once: building a `CharacterSet` costs more than the encoding (a page
    /// of 50 records links each one).
    private static let unreserved = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")

    /// The notice a redirect after a change asked for (`?notice=created`: the word's name), in the page's language;
    /// nil for anything but the words a change says.
    static func notice(_ request: Request, _ text: ConsoleText) -> String? {
        request.uri.queryParameters["notice"].flatMap { ConsoleWord(rawValue: String($0)) }.flatMap { notices.contains($0) ? text[$0] : nil }
    }

    /// The words a redirect after a change may ask a page to say.
    private static let notices: Set<ConsoleWord> = [
        .created, .saved, .deleted, .published, .rolledBack, .userDisabled, .userEnabled, .groupAdded, .groupRemoved, .keyRevoked,
        .userSessionEnded, .versionBlocked, .versionUnblocked, .pushScheduled, .pushCancelled,
    ]
}
