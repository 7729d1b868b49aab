import Foundation
import HTTPTypes
import Hummingbird
import KizunaCore
import NIOCore
import SQLKit

/// Health, metrics and the API description: the routes an operator or load balancer uses.
struct OperationsController: Sendable {
    let readiness: Readiness
    /// Probed by `/health/ready` once the server is ready, so an instance that cannot reach its store leaves the
    /// load balancer's rotation until it can.
    let database: KizunaDatabase

    /// The body of `/health/ready`.
    struct ReadyBody: Codable, Equatable {
        var status: String
        var step: String?
        var done: Int?
        var total: Int?
        var message: String?
    }

    func addRoutes(to root: RouterGroup<KizunaRequestContext>) {
        root.get("/health/live", use: live)
        root.get("/health/ready", use: ready)
        root.get("/metrics", use: metrics)
        root.get("/openapi.yaml", use: openAPI)
    }

    /// 200 while the process runs; its body is made once (load balancers ask often).
    @Sendable func live(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        .bytes(Self.liveBody, contentType: "application/json; charset=utf-8")
    }

    private static let liveBody = Array(#"{"status":"live"}"#.utf8)

    /// 200 once migrated and the store answers; 503 with `Retry-After` while starting, migrating or cut off.
    @Sendable func ready(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        switch readiness.current {
        case .ready:
            do {
                try await database.raw("SELECT 1").run()
            } catch  where StoreFailure.isUnreachable(error) {
                return try .json(
                    ReadyBody(status: "store_unavailable", message: "The store cannot be reached."), status: .serviceUnavailable,
                    headers: [.retryAfter: String(StoreFailure.retryAfter)])
            }
            return try .json(ReadyBody(status: "ready"))
        case .starting:
            return try .json(ReadyBody(status: "starting"), status: .serviceUnavailable, headers: [.retryAfter: "5"])
        case .migrating(let progress):
            return try .json(
                ReadyBody(status: "migrating", step: progress.step, done: progress.done, total: progress.total),
                status: .serviceUnavailable,
                headers: [.retryAfter: "5"]
            )
        case .failed(let error):
            return try .json(ReadyBody(status: "failed", message: error.message), status: .serviceUnavailable)
        }
    }

    @Sendable func metrics(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        .bytes(MetricsExporter.render(), contentType: "text/plain; version=0.0.4; charset=utf-8")
    }

    @Sendable func openAPI(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        .bytes(try OpenAPIDocument.bytes(), contentType: "application/yaml; charset=utf-8")
    }
}

/// `openapi.yaml`, bundled as a resource of this target.
package enum OpenAPIDocument {
    /// The document's bytes, read from the bundle once.
    package static func bytes() throws -> [UInt8] {
        try loaded.get()
    }

    private static let loaded = Result<[UInt8], any Error> {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "yaml") else {
            throw KizunaError(.internalError, "openapi.yaml is missing from the build.")
        }
        return Array(try Data(contentsOf: url))
    }
}
