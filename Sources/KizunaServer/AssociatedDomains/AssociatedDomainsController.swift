import Foundation
import HTTPTypes
import Hummingbird
import KizunaCore
import Logging

/// `/.well-known/apple-app-site-association` (and the same bytes at `/apple-app-site-association`, where older iOS
/// versions looked) and the admin routes for the settings behind it.
struct AssociatedDomainsController: Sendable {
    let store: AssociatedDomainStore
    let file: AssociationFile

    func addPublicRoutes(to root: RouterGroup<KizunaRequestContext>) {
        root.get("/.well-known/apple-app-site-association", use: servedFile)
        root.get("/apple-app-site-association", use: servedFile)
    }

    func addAdminRoutes(to admin: RouterGroup<KizunaRequestContext>) {
        admin.get("/apps/{app}/associated-domains", use: settings)
        admin.put("/apps/{app}/associated-domains", use: putSettings)
        admin.get("/apps/{app}/apple-app-site-association", use: appFile)
    }

    /// The file iOS fetches: served directly with 200 and application/json (Apple treats any redirect as "no
    /// association"), from bytes kept in memory; 304 for a matching `If-None-Match`.
    @Sendable func servedFile(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let served = try await file.served(logger: context.logger)
        var headers: HTTPFields = [.contentType: "application/json", .cacheControl: "public, max-age=3600", .eTag: served.etag]
        let tags = request.headers[.ifNoneMatch]?.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } ?? []
        if tags.contains(served.etag) {
            headers[.contentType] = nil
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentLength] = String(served.bytes.readableBytes)
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: served.bytes))
    }

    @Sendable func settings(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let app = try await requireApp(context)
        return try .json(try await store.settings(app: app))
    }

    @Sendable func putSettings(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let app = try await requireApp(context)
        let settings = try await request.decode(as: AssociatedDomainSettings.self, context: context)
        try await store.put(app: app, settings)
        file.invalidate()
        context.logger.notice("Associated-domain settings changed", metadata: ["app": "\(app)"])
        return try .json(try await store.settings(app: app))
    }

    /// One app's part of the file, as it would be served.
    @Sendable func appFile(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let app = try await requireApp(context)
        let bytes = try await store.file(onlyApp: app).encoded()
        return .bytes(Array(bytes), contentType: "application/json")
    }

    private func requireApp(_ context: KizunaRequestContext) async throws -> String {
        try await store.requireApp(try context.parameters.path("app"))
    }
}
