import Foundation
import HTTPTypes
import Hummingbird
import KizunaCore
import Logging

/// Admin routes for published documents, the same for config templates (`/apps/{app}/config…`) and gate
/// policies (`/apps/{app}/gate…`): read, publish with `If-Match`, dry-run, history, show, diff and rollback.
struct PublishingController: Sendable {
    let documents: any DocumentRepository
    /// Dropped at once after a publish, so this instance's device endpoints read their writes; other instances
    /// drop theirs when their change feed delivers the publish.
    let live: LiveDocuments
    /// Dropped at once after a data schema publish, so this instance's GraphQL API follows its own publish.
    let dataSchemas: LiveDataSchemas
    /// Every route checks its app exists: an unknown or deleted app is 404, not an empty document at version 0.
    let apps: any AppRepository
    /// Gate publishes write the app's signed mirror before they are answered.
    let mirrors: GateMirrors
    let retention: Int

    func addRoutes(to admin: RouterGroup<KizunaRequestContext>) {
        for kind in DocumentKind.allCases {
            let base = "/apps/{app}/\(kind.rawValue)"
            admin.get(RouterPath(base)) { try await current($0, $1, kind) }
            admin.post(RouterPath("\(base):publish")) { try await publish($0, $1, kind) }
            admin.post(RouterPath("\(base):rollback")) { try await rollback($0, $1, kind) }
            admin.get(RouterPath("\(base)/versions")) { try await history($0, $1, kind) }
            admin.get(RouterPath("\(base)/versions/{version}")) { try await show($0, $1, kind) }
            admin.get(RouterPath("\(base):diff")) { try await diff($0, $1, kind) }
        }
        admin.post("/apps/{app}/config:simulate") { try await simulate($0, $1) }
        admin.get("/apps/{app}/gate/mirror") { request, context in
            let signed = try await mirrors.signed(app: try await appId(context))
            return Response.bytes(Array(signed.bytes), contentType: "application/json", headers: [.cacheControl: "no-store"])
        }
        admin.get("/gate-mirror/key") { _, _ in try Response.json(try mirrors.publicKey()) }
    }

    /// The live document, with its version as the ETag to publish against.
    func current(_ request: Request, _ context: KizunaRequestContext, _ kind: DocumentKind) async throws -> Response {
        let document = try await documents.current(app: try await appId(context), kind: kind)
        return try .json(document, headers: [.eTag: document.etag, .cacheControl: "no-store"])
    }

    /// What the live template gives the device the body describes (a `config:fetch` body), and why; `?at=` (ISO 8601)
    /// sets the time that date and weekly conditions are checked against, now by default.
    func simulate(_ request: Request, _ context: KizunaRequestContext) async throws -> Response {
        let app = try await appId(context)
        let device = try await request.decode(as: DeviceContext.self, context: context)
        var now = Date()
        if let at = request.uri.queryParameters["at"] {
            let formatter = ISO8601DateFormatter()  // 2026-11-28T12:00:00Z or +09:00
            guard let date = formatter.date(from: String(at)) else {
                throw KizunaError(.badRequest, "at must be a time in ISO 8601, such as 2026-11-27T09:00:00Z.", field: "at")
            }
            now = date
        }
        let evaluation = try EvaluationContext(device: device, appId: app, now: now)
        let live = try await documents.current(app: app, kind: .config)
        return try .json(
            try RemoteConfigTemplate(parsing: live.document).simulate(evaluation, version: live.version), headers: [.cacheControl: "no-store"])
    }

    /// Publishes a new version (`If-Match` required), or with `?validateOnly=true` only checks it.
    func publish(_ request: Request, _ context: KizunaRequestContext, _ kind: DocumentKind) async throws -> Response {
        let app = try await appId(context)
        let body = try await request.decode(as: PublishRequest.self, context: context)
        try kind.validate(body.document)
        if Self.flag("validateOnly", request) {
            let current = try await documents.current(app: app, kind: kind)
            var validation = DocumentValidation(valid: true, currentVersion: current.version)
            if kind == .schema {
                // What the publish would do to the store; refused as the publish would be, unless allowed.
                let plan = try SchemaPublishing.plan(from: current.document, to: body.document).plan
                try SchemaPublishing.check(plan, allowDestructive: Self.flag("allowDestructive", request))
                validation.changes = plan.changes.map(SchemaPublishing.info)
            }
            return try .json(validation, headers: [.eTag: current.etag])
        }
        return try await publish(body.document, kind: kind, app: app, message: body.message, rollbackOf: nil, request, context)
    }

    /// Publishes a kept version again, as a new version.
    func rollback(_ request: Request, _ context: KizunaRequestContext, _ kind: DocumentKind) async throws -> Response {
        let app = try await appId(context)
        let body = try await request.decode(as: RollbackRequest.self, context: context)
        guard let target = try await documents.find(app: app, kind: kind, version: body.version) else {
            throw KizunaError(
                .notFound,
                "Version \(body.version) of the \(kind.title) is not kept; `history` lists the versions you can roll back to.",
                field: "$.version"
            )
        }
        let message = body.message ?? "Roll back to version \(target.version)"
        return try await publish(target.document, kind: kind, app: app, message: message, rollbackOf: target.version, request, context)
    }

    /// The kept versions, newest first, a page at a time (`?limit`, `?before`).
    func history(_ request: Request, _ context: KizunaRequestContext, _ kind: DocumentKind) async throws -> Response {
        let limit = try request.uri.queryParameters.int("limit", default: 50, in: 1...300)
        let before = try request.uri.queryParameters.optionalInt("before")
        return try .json(
            DocumentHistory(versions: try await documents.history(app: try await appId(context), kind: kind, before: before, limit: limit)))
    }

    func show(_ request: Request, _ context: KizunaRequestContext, _ kind: DocumentKind) async throws -> Response {
        let document = try await version(context.parameters.path("version"), kind: kind, context: context)
        return try .json(document, headers: [.eTag: document.etag])
    }

    /// What changed from `?from=N` to `?to=M` (or to the live version).
    func diff(_ request: Request, _ context: KizunaRequestContext, _ kind: DocumentKind) async throws -> Response {
        let app = try await appId(context)
        guard let from = request.uri.queryParameters["from"] else {
            throw KizunaError(.badRequest, "Give the version to compare from as ?from=N (and optionally &to=M).", field: "from")
        }
        let old = try await version(String(from), kind: kind, context: context)
        let new =
            if let to = request.uri.queryParameters["to"] {
                try await version(String(to), kind: kind, context: context)
            } else {
                try await documents.current(app: app, kind: kind)
            }
        return try .json(DocumentDiff(from: old.version, to: new.version, changes: old.document.changes(to: new.document)))
    }

    private func publish(
        _ document: JSONValue,
        kind: DocumentKind,
        app: String,
        message: String?,
        rollbackOf: Int64?,
        _ request: Request,
        _ context: KizunaRequestContext
    ) async throws -> Response {
        let expected = try Self.expectedVersion(request.headers[.ifMatch], kind: kind)
        let effect: PublishEffect? =
            kind == .schema
            ? SchemaPublishing.effect(of: document, app: app, allowDestructive: Self.flag("allowDestructive", request)) : nil
        let published = try await documents.publish(
            app: app,
            kind: kind,
            document: document,
            expected: expected,
            author: context.adminToken?.name ?? "unknown",
            message: message,
            rollbackOf: rollbackOf,
            retention: retention,
            effect: effect
        )
        live.invalidate(app)
        if kind == .schema { dataSchemas.invalidate(app) }
        if kind == .gate { await mirrors.write(app: app) }
        context.logger.notice(
            "Published \(kind.title)",
            metadata: ["app": "\(app)", "version": "\(published.version)", "rollbackOf": "\(rollbackOf.map(String.init) ?? "-")"]
        )
        return try .json(published, headers: [.eTag: published.etag])
    }

    /// Whether the query sets `name` (`?name=true` or `?name=1`).
    private static func flag(_ name: String, _ request: Request) -> Bool {
        request.uri.queryParameters[name[...]].map { $0 == "true" || $0 == "1" } ?? false
    }

    /// Reads `If-Match`: `*` or one strong ETag `"<version>"`.
    static func expectedVersion(_ header: String?, kind: DocumentKind) throws(KizunaError) -> ExpectedVersion {
        guard let header = header?.trimmingCharacters(in: .whitespaces), !header.isEmpty else {
            throw KizunaError(
                .preconditionRequired,
                "Publishing needs If-Match with the ETag of the \(kind.title) you changed (or * to overwrite whatever is current).",
                field: "If-Match"
            )
        }
        if header == "*" { return .any }
        guard header.hasPrefix("\""), header.hasSuffix("\""), header.count > 2, let version = Int64(header.dropFirst().dropLast()) else {
            throw KizunaError(.badRequest, "If-Match must be one ETag such as \"12\", as GET returned it, or *.", field: "If-Match")
        }
        return .version(version)
    }

    private func version(_ text: String, kind: DocumentKind, context: KizunaRequestContext) async throws -> PublishedDocument {
        guard let number = Int64(text), number >= 0 else {
            throw KizunaError(.badRequest, "'\(text)' is not a version number.", field: "version")
        }
        if number == 0 { return .initial }
        guard let document = try await documents.find(app: try await appId(context), kind: kind, version: number) else {
            throw KizunaError(.notFound, "Version \(number) of the \(kind.title) is not kept.", field: "version")
        }
        return document
    }

    private func appId(_ context: KizunaRequestContext) async throws -> String {
        try await apps.require(try context.parameters.path("app")).id
    }
}
