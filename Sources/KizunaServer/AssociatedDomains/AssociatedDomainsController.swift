import Foundation
import HTTPTypes
import Hummingbird
import KizunaCore
import Logging
import Synchronization

/// `/.well-known/apple-app-site-association` and the admin routes for the settings behind it.
struct AssociatedDomainsController: Sendable {
    let store: AssociatedDomainStore
    /// The last file served, kept for when the file cannot be built: iOS reads a 4xx as "not associated" and would
    /// drop AutoFill and universal links for every app, so a server-side problem must never reach it as one.
    private let lastGood = LastGoodFile()

    private final class LastGoodFile: Sendable {
        let bytes = Mutex<[UInt8]?>(nil)
    }

    init(store: AssociatedDomainStore) {
        self.store = store
    }

    func addPublicRoutes(to root: RouterGroup<KizunaRequestContext>) {
        root.get("/.well-known/apple-app-site-association", use: servedFile)
    }

    func addAdminRoutes(to admin: RouterGroup<KizunaRequestContext>) {
        admin.get("/apps/{app}/associated-domains", use: settings)
        admin.put("/apps/{app}/associated-domains", use: putSettings)
        admin.get("/apps/{app}/apple-app-site-association", use: appFile)
    }

    /// The file iOS fetches: served directly with 200 and application/json (Apple treats any redirect as "no
    /// association"), or the last good file when it cannot be built now.
    @Sendable func servedFile(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let bytes: [UInt8]
        do {
            bytes = Array(try await store.file().encoded())
            lastGood.bytes.withLock { $0 = bytes }
        } catch {
            // Too large, or the store out of reach: the last good file is still the right answer.
            guard let kept = lastGood.bytes.withLock({ $0 }) else {
                context.logger.error("apple-app-site-association cannot be built", metadata: ["error": "\(error)"])
                throw KizunaError(.unavailable, "The apple-app-site-association file cannot be served right now.", retryAfter: 60)
            }
            context.logger.error("apple-app-site-association cannot be built; serving the last good file", metadata: ["error": "\(error)"])
            bytes = kept
        }
        return .bytes(bytes, contentType: "application/json", headers: [.cacheControl: "public, max-age=3600"])
    }

    @Sendable func settings(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let app = try await requireApp(context)
        return try .json(try await store.settings(app: app))
    }

    @Sendable func putSettings(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let app = try await requireApp(context)
        let settings = try await request.decode(as: AssociatedDomainSettings.self, context: context)
        try await store.put(app: app, settings)
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
