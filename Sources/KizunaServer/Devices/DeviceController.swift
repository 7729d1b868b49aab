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

    /// The config values this device gets, evaluated against the live template (or the answer already encoded for
    /// a device whose conditions come out the same).
    @Sendable nonisolated(nonsending) func fetchConfig(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let (app, body, evaluation) = try await prepare(request, context)
        let config = try await live.config(app, atLeast: body.knownVersion)
        let outcomes = config.value.outcomes(evaluation)
        let answer = try config.answers.answer(outcomes, version: config.version) {
            Array(try Self.encoder.encode(ConfigValues(version: config.version, values: config.value.evaluate(outcomes))))
        }
        return Self.conditional(answer, request: request)
    }

    /// The gate's decision for this device, with the policy (as the device may see it) to decide offline later.
    @Sendable nonisolated(nonsending) func checkGate(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let (app, body, evaluation) = try await prepare(request, context)
        let gate = try await live.gate(app, atLeast: body.knownVersion)
        let storeURL = gate.app.storeURL
        let decision = gate.value.decide(evaluation, policyVersion: gate.version, storeURL: storeURL)
        let installId = body.device.installId
        let tester = installId.flatMap { gate.value.maintenance?.allowInstallIds.contains($0) == true ? $0 : nil }
        let key = LiveDocuments.GateAnswerKey(decision: decision, tester: tester, storeURL: storeURL)
        let answer = try gate.answers.answer(key, version: gate.version) {
            let result = GateCheck(decision: decision, policy: gate.value.source(visibleTo: installId), storeURL: storeURL)
            return Array(try Self.encoder.encode(result))
        }
        return Self.conditional(answer, request: request)
    }

    // `nonisolated(nonsending)` here and down the cached path (LiveDocuments, FeedCache): a call stays on the caller's
    // executor instead of switching to the generic one and back, two task switches per call.
    private nonisolated(nonsending) func prepare(
        _ request: Request, _ context: KizunaRequestContext
    ) async throws -> (String, DeviceRequest, EvaluationContext) {
        let app = try context.parameters.path("app")
        let bytes = try await request.body(context)
        // The SDK's plain bodies are read directly; JSONDecoder takes the rest and explains what is wrong.
        let plain = bytes.withUnsafeReadableBytes { DeviceRequest(plainJSON: $0) }
        let body = try plain ?? JSONRequestDecoder.decode(DeviceRequest.self, from: bytes)
        try limiter.take(app: app, install: body.device.installId)
        return (app, body, try EvaluationContext(device: body.device, appId: app))
    }

    private static let encoder = WireFormat.canonicalEncoder()

    /// The body with its ETag, or 304 when `If-None-Match` names it.
    private static func conditional<Key>(_ answer: AnswerMemo<Key>.Answer, request: Request) -> Response {
        if let match = request.headers[.ifNoneMatch],
            match.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == answer.etag })
        {
            var response = Response.empty(.notModified)
            response.headers[.eTag] = answer.etag
            response.headers[.cacheControl] = "no-store"
            return response
        }
        return Response(
            status: .ok,
            headers: [
                .contentType: "application/json; charset=utf-8", .contentLength: String(answer.body.readableBytes), .eTag: answer.etag,
                .cacheControl: "no-store",
            ],
            body: .init(byteBuffer: answer.body))
    }
}
