import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import KizunaCore
import NIOCore

/// The device endpoints: `config:fetch` and `gate:check`, answered from ``LiveDocuments`` without touching the
/// store in the common case, and throttled per install.
struct DeviceController: Sendable {
    let live: LiveDocuments
    let limiter: InstallRateLimiter

    func addRoutes(to v1: RouterGroup<KizunaRequestContext>) {
        v1.post("/apps/{app}/config:fetch", use: fetchConfig)
        v1.post("/apps/{app}/gate:check", use: checkGate)
    }

    /// The config values this device gets, evaluated against the live template.
    @Sendable func fetchConfig(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let (app, body, evaluation) = try await prepare(request, context)
        let config = try await live.config(app, atLeast: body.knownVersion)
        let result = ConfigValues(version: config.version, values: config.value.evaluate(evaluation))
        return try Self.conditional(result, version: config.version, request: request)
    }

    /// The gate's decision for this device, with the policy (as the device may see it) to decide offline later.
    @Sendable func checkGate(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let (app, body, evaluation) = try await prepare(request, context)
        let gate = try await live.gate(app, atLeast: body.knownVersion)
        let storeURL = gate.app.storeURL
        let decision = gate.value.decide(evaluation, policyVersion: gate.version, storeURL: storeURL)
        let result = GateCheck(decision: decision, policy: gate.value.source(visibleTo: body.device.installId), storeURL: storeURL)
        return try Self.conditional(result, version: gate.version, request: request)
    }

    private func prepare(_ request: Request, _ context: KizunaRequestContext) async throws -> (String, DeviceRequest, EvaluationContext) {
        let app = try context.parameters.path("app")
        let body = try await request.decode(as: DeviceRequest.self, context: context)
        try limiter.take("\(app)/\(body.device.installId ?? "-")")
        return (app, body, try EvaluationContext(device: body.device, appId: app))
    }

    private static let encoder = WireFormat.canonicalEncoder()

    /// The body with an ETag over its bytes, or 304 when `If-None-Match` names it.
    private static func conditional(_ value: some Encodable, version: Int64, request: Request) throws -> Response {
        let bytes = Array(try encoder.encode(value))
        let digest = hex(Data(SHA256.hash(data: bytes).prefix(8)))
        let etag = "\"\(version)-\(digest)\""
        let headers: HTTPFields = [.eTag: etag, .cacheControl: "no-store"]
        if let match = request.headers[.ifNoneMatch], match.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == etag })
        {
            var response = Response.empty(.notModified)
            response.headers.append(contentsOf: headers)
            return response
        }
        return .bytes(bytes, contentType: "application/json; charset=utf-8", headers: headers)
    }
}
