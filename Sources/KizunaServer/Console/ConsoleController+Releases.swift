import Foundation
import HTTPTypes
import Hummingbird
import KizunaCore

/// An app's Releases page: its releases with their artifacts (downloaded through the admin API's artifact route, as
/// they stream) and, per version, blocking or unblocking it through the update gate — a publish of the gate policy
/// against the version the page showed, linked from the page to the change it made.
extension ConsoleController {
    func addReleaseRoutes(to root: RouterGroup<KizunaRequestContext>) {
        root.get("/console/apps/{app}/releases", use: signedIn(releasesPage))
        root.post("/console/apps/{app}/releases/block", use: signedIn(changeReleaseBlock))
        root.get("/console/apps/{app}/releases/{release}/artifacts/{name}", use: signedIn(downloadArtifact))
    }

    private struct BlockForm: Decodable {
        var csrf: String?
        var version: String?
        var block: String?
        /// The gate policy's version the page showed.
        var base: Int64?
    }

    @Sendable func releasesPage(_ request: Request, context: KizunaRequestContext, session: ConsoleSession) async throws -> Response {
        guard let app = try await findApp(try context.parameters.require("app"), session, context) else { return notFound(request, session) }
        let changed = request.uri.queryParameters["gate"].flatMap { Int64($0) }
        let notice = Self.notice(request, Self.text(request))
        return try await releasesPage(request, context, session, app: app, notice: notice, gateChange: notice == nil ? nil : changed)
    }

    private func releasesPage(
        _ request: Request, _ context: KizunaRequestContext, _ session: ConsoleSession, app: AppRecord, problems: [ConsolePages.Problem] = [],
        notice: String? = nil, gateChange: Int64? = nil, status: HTTPResponse.Status = .ok
    ) async throws -> Response {
        let answer = try await api.call(.get, "\(Self.appPath(app.id))/releases?limit=100", as: session.token, context: context)
        if let error = answer.error { throw error }
        let releases = try answer.decode(ReleaseList.self).releases
        let gate = try await liveDocument(.gate, app, session, context)
        let frame = Self.frame(request, session, section: .apps)
        let page = ConsoleReleasePages.list(
            frame, app: app, releases: releases, gateVersion: gate.version, problems: problems, notice: notice, gateChange: gateChange)
        return Self.html(page, status: status)
    }

    /// Adds the version to the live gate policy's `blockedVersions`, or takes it out, over the version the page showed:
    /// a policy published meanwhile is not overwritten but explained.
    @Sendable func changeReleaseBlock(_ request: Request, context: KizunaRequestContext, session: ConsoleSession) async throws -> Response {
        let form = try await request.form(BlockForm.self, context: context)
        if let refusal = refusal(request, context, session, csrf: form.csrf) { return refusal }
        guard let app = try await findApp(try context.parameters.require("app"), session, context) else { return notFound(request, session) }
        let text = Self.text(request)
        let block = form.block == "true"
        func refused(_ message: String, status: HTTPResponse.Status) async throws -> Response {
            try await releasesPage(
                request, context, session, app: app, problems: [ConsolePages.Problem(field: nil, message: message)], status: status)
        }
        guard let version = try? SemanticVersion(parsing: form.version ?? "") else {
            return try await refused("\(text[.versionColumn]): \(form.version ?? "")", status: .badRequest)
        }
        let live = try await liveDocument(.gate, app, session, context)
        guard let base = form.base, base == live.version else { return try await refused(text[.gateChangedMeanwhile], status: .preconditionFailed) }
        guard let policy = GatePolicy.changingBlock(of: version, block: block, in: live.document) else {
            // Already as asked (another operator did it): nothing to publish.
            return Self.redirect("\(ConsoleAppPages.Tab.releases.path(app))?notice=\(block ? "versionBlocked" : "versionUnblocked")")
        }
        let message = "\(block ? "Block" : "Unblock") \(version) (console)"
        let answer = try await api.call(
            .post, "\(Self.appPath(app.id))/gate:publish", json: PublishRequest(document: policy, message: message),
            headers: [.ifMatch: "\"\(base)\""], as: session.token, context: context)
        if let error = answer.error {
            return try await refused(error.code == .preconditionFailed ? text[.gateChangedMeanwhile] : error.message, status: answer.status)
        }
        let published = try answer.decode(PublishedDocument.self)
        return Self.redirect(
            "\(ConsoleAppPages.Tab.releases.path(app))?notice=\(block ? "versionBlocked" : "versionUnblocked")&gate=\(published.version)")
    }

    /// The artifact's bytes from the admin API's route, passed through as they stream (a `Range` too), as a download.
    @Sendable func downloadArtifact(_ request: Request, context: KizunaRequestContext, session: ConsoleSession) async throws -> Response {
        let (app, release, name) = (
            try context.parameters.require("app"), try context.parameters.require("release"), try context.parameters.require("name")
        )
        var headers: HTTPFields = [:]
        if let range = request.headers[.range] { headers[.range] = range }
        let path = "\(Self.appPath(app))/releases/\(Self.escapedSegment(release))/artifacts/\(Self.escapedSegment(name))"
        var response = try await api.respond(.get, path, headers: headers, as: session.token, context: context)
        guard response.status.kind == .successful else {
            if response.status == .notFound { return notFound(request, session) }
            return response
        }
        // The admin route names it as an attachment already; the page's own rules go on top.
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[.cacheControl] = "no-store"
        return response
    }
}
