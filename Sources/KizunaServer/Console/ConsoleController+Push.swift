import Foundation
import HTTPTypes
import Hummingbird
import KizunaCore

/// An app's Push page: the APNs credentials' status (never the key), a composer — localized texts, a target (an
/// install, a user, a condition, every device), now or at a time (in each device's own time zone, if asked) — the
/// latest jobs, and each job's report: totals, failures and skips by reason, each device's outcome. Through the admin
/// API's push routes.
extension ConsoleController {
    func addPushRoutes(to root: RouterGroup<KizunaRequestContext>) {
        root.get("/console/apps/{app}/push", use: signedIn(pushPage))
        root.post("/console/apps/{app}/push", use: signedIn(sendPush))
        root.get("/console/apps/{app}/push/jobs/{job}", use: signedIn(pushJobPage))
        root.post("/console/apps/{app}/push/jobs/{job}/cancel", use: signedIn(cancelPushJob))
    }

    /// The composer's fields, as posted.
    struct PushForm: Decodable {
        var csrf: String?
        var title: String?
        var body: String?
        /// `tag = title | body` lines, one language each.
        var translations: String?
        var badge: String?
        var sound: String?
        var targetKind: String?
        var target: String?
        /// Empty for now; else a `datetime-local` value.
        var sendAt: String?
        var localTime: String?
        var fallbackTimeZone: String?

        static let empty = PushForm(targetKind: "install", localTime: nil)
    }

    @Sendable func pushPage(_ request: Request, context: KizunaRequestContext, session: ConsoleSession) async throws -> Response {
        guard let app = try await findApp(try context.parameters.require("app"), session, context) else { return notFound(request, session) }
        return try await pushPage(request, context, session, app: app, form: .empty, problems: [])
    }

    private func pushPage(
        _ request: Request, _ context: KizunaRequestContext, _ session: ConsoleSession, app: AppRecord, form: PushForm,
        problems: [ConsolePages.Problem], status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let credentials = try await api.call(.get, "\(Self.appPath(app.id))/push/credentials", as: session.token, context: context)
        if let error = credentials.error, credentials.status != .notFound { throw error }
        let jobs = try await api.call(.get, "\(Self.appPath(app.id))/push/jobs?limit=20", as: session.token, context: context)
        if let error = jobs.error { throw error }
        let page = ConsolePushPages.composer(
            Self.frame(request, session, section: .apps), app: app,
            credentials: credentials.isSuccess ? try credentials.decode(PushCredentialsInfo.self) : nil,
            jobs: try jobs.decode(PushJobList.self).jobs, form: form, problems: problems)
        return Self.html(page, status: status)
    }

    /// Schedules the composed notification; its report opens next.
    @Sendable func sendPush(_ request: Request, context: KizunaRequestContext, session: ConsoleSession) async throws -> Response {
        let form = try await request.form(PushForm.self, context: context)
        if let refusal = refusal(request, context, session, csrf: form.csrf) { return refusal }
        guard let app = try await findApp(try context.parameters.require("app"), session, context) else { return notFound(request, session) }
        let text = Self.text(request)
        let (job, problems) = ConsolePushPages.request(form, text: text)
        guard let job else { return try await pushPage(request, context, session, app: app, form: form, problems: problems, status: .badRequest) }
        let answer = try await api.call(.post, "\(Self.appPath(app.id))/push/jobs", json: job, as: session.token, context: context)
        if let error = answer.error {
            let problems = ConsolePages.problems(error) { field in ConsolePushPages.label(ofField: field, text) }.map { problem in
                ConsolePages.Problem(field: problem.field.flatMap(ConsolePushPages.formField), message: problem.message)
            }
            return try await pushPage(request, context, session, app: app, form: form, problems: problems, status: answer.status)
        }
        let created = try answer.decode(PushJobStatus.self)
        return Self.redirect("\(ConsoleAppPages.Tab.push.path(app))/jobs/\(Self.escapedSegment(created.id))?notice=pushScheduled")
    }

    @Sendable func pushJobPage(_ request: Request, context: KizunaRequestContext, session: ConsoleSession) async throws -> Response {
        guard let app = try await findApp(try context.parameters.require("app"), session, context) else { return notFound(request, session) }
        let path = "/v1/admin/push/jobs/\(Self.escapedSegment(try context.parameters.require("job")))"
        let job = try await api.call(.get, path, as: session.token, context: context)
        if job.status == .notFound { return notFound(request, session) }
        if let error = job.error { throw error }
        let status = try job.decode(PushJobStatus.self)
        guard status.app == app.id else { return notFound(request, session) }
        let deliveries = try await api.call(.get, "\(path)/deliveries?limit=100", as: session.token, context: context)
        if let error = deliveries.error { throw error }
        let frame = Self.frame(request, session, section: .apps)
        let notice = Self.notice(request, frame.text)
        return Self.html(
            ConsolePushPages.report(frame, app: app, job: status, deliveries: try deliveries.decode(PushDeliveryList.self), notice: notice))
    }

    @Sendable func cancelPushJob(_ request: Request, context: KizunaRequestContext, session: ConsoleSession) async throws -> Response {
        let form = try await request.form(PushForm.self, context: context)
        if let refusal = refusal(request, context, session, csrf: form.csrf) { return refusal }
        guard let app = try await findApp(try context.parameters.require("app"), session, context) else { return notFound(request, session) }
        let job = try context.parameters.require("job")
        let answer = try await api.call(.delete, "/v1/admin/push/jobs/\(Self.escapedSegment(job))", as: session.token, context: context)
        if answer.status == .notFound { return notFound(request, session) }
        if let error = answer.error { throw error }
        return Self.redirect("\(ConsoleAppPages.Tab.push.path(app))/jobs/\(Self.escapedSegment(job))?notice=pushCancelled")
    }
}
