import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import KizunaCore
import NIOCore

/// The device endpoints: `config:fetch` and `gate:check`, answered from ``LiveDocuments`` without touching the
/// store in the common case, and throttled per install.
///
/// Each answer is made by one synchronous function per endpoint (``configAnswer(_:evaluation:)``,
/// ``gateAnswer(_:body:evaluation:)``), which the Hummingbird routes and ``DeviceFastLane`` share: the routes read the
/// live documents (from the store when not cached) and report errors the ordinary way; the fast lane answers when
/// everything is already in memory and otherwise hands the request to the routes.
struct DeviceController: Sendable {
    let live: LiveDocuments
    let limiter: InstallRateLimiter

    /// The two endpoints, each `POST /v1/apps/{app}/<action>`.
    enum Endpoint: Sendable, CaseIterable {
        case config, gate

        /// The path's last segment.
        var action: String {
            switch self {
            case .config: "config:fetch"
            case .gate: "gate:check"
            }
        }

        /// The route as the router names it (the request log's and the metrics' `http.route`), under the `/v1` group.
        var route: String { "/v1/apps/{app}/\(action)" }
    }

    /// An answer: 200 with the body, or 304 when `If-None-Match` named it.
    struct Reply: Sendable {
        let status: HTTPResponse.Status
        let headers: HTTPFields
        let body: ByteBuffer?
    }

    func addRoutes(to v1: RouterGroup<KizunaRequestContext>) {
        v1.post("/apps/{app}/\(Endpoint.config.action)", use: fetchConfig)
        v1.post("/apps/{app}/\(Endpoint.gate.action)", use: checkGate)
    }

    /// The config values this device gets, evaluated against the live template (or the answer already encoded for
    /// a device whose conditions come out the same).
    @Sendable nonisolated(nonsending) func fetchConfig(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let (app, body, evaluation) = try await prepare(request, context)
        let config = try await live.config(app, atLeast: body.knownVersion)
        return Response(try Self.conditional(configAnswer(config, evaluation: evaluation), ifNoneMatch: request.headers[.ifNoneMatch]))
    }

    /// The gate's decision for this device, with the policy (as the device may see it) to decide offline later.
    @Sendable nonisolated(nonsending) func checkGate(_ request: Request, context: KizunaRequestContext) async throws -> Response {
        let (app, body, evaluation) = try await prepare(request, context)
        let gate = try await live.gate(app, atLeast: body.knownVersion)
        return Response(try Self.conditional(gateAnswer(gate, body: body, evaluation: evaluation), ifNoneMatch: request.headers[.ifNoneMatch]))
    }

    /// The answer to a device request of `app` with `bytes` as its body when everything it needs is in memory (the
    /// body in the SDK's plain shape, the live document cached and fresh) and the install is within its limit; nil
    /// when the request must take its route, which then answers it — or explains what is wrong — the ordinary way.
    /// Nothing is taken before a nil: the rate limiter refuses without taking a token, and is asked last.
    func immediateReply(_ endpoint: Endpoint, app: String, body bytes: ByteBuffer, ifNoneMatch: String?) -> Reply? {
        guard let body = bytes.withUnsafeReadableBytes({ DeviceRequest(plainJSON: $0) }),
            let evaluation = try? EvaluationContext(device: body.device, appId: app)
        else { return nil }
        // The token is taken last, so nothing but a memo entry is left behind when the route takes over.
        func reply<Key>(_ answer: AnswerMemo<Key>.Answer?) -> Reply? {
            guard let answer, (try? limiter.take(app: app, install: body.device.installId)) != nil else { return nil }
            return Self.conditional(answer, ifNoneMatch: ifNoneMatch)
        }
        switch endpoint {
        case .config:
            return reply(live.cachedConfig(app, atLeast: body.knownVersion).flatMap { try? configAnswer($0, evaluation: evaluation) })
        case .gate:
            return reply(live.cachedGate(app, atLeast: body.knownVersion).flatMap { try? gateAnswer($0, body: body, evaluation: evaluation) })
        }
    }

    private func configAnswer(
        _ config: LiveDocuments.Live<RemoteConfigTemplate, ConditionOutcomes>, evaluation: EvaluationContext
    ) throws -> AnswerMemo<ConditionOutcomes>.Answer {
        let outcomes = config.value.outcomes(evaluation)
        return try config.answers.answer(outcomes, version: config.version) {
            Array(try Self.encoder.encode(ConfigValues(version: config.version, values: config.value.evaluate(outcomes))))
        }
    }

    private func gateAnswer(
        _ gate: LiveDocuments.Live<GatePolicy, LiveDocuments.GateAnswerKey>, body: DeviceRequest, evaluation: EvaluationContext
    ) throws -> AnswerMemo<LiveDocuments.GateAnswerKey>.Answer {
        let storeURL = gate.app.storeURL
        let decision = gate.value.decide(evaluation, policyVersion: gate.version, storeURL: storeURL)
        let installId = body.device.installId
        let tester = installId.flatMap { gate.value.maintenance?.allowInstallIds.contains($0) == true ? $0 : nil }
        let key = LiveDocuments.GateAnswerKey(decision: decision, tester: tester, storeURL: storeURL)
        return try gate.answers.answer(key, version: gate.version) {
            let result = GateCheck(decision: decision, policy: gate.value.source(visibleTo: installId), storeURL: storeURL)
            return Array(try Self.encoder.encode(result))
        }
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
    private static func conditional<Key>(_ answer: AnswerMemo<Key>.Answer, ifNoneMatch: String?) -> Reply {
        if let match = ifNoneMatch, match.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == answer.etag }) {
            // Content-Length 0 as Hummingbird gives every empty body.
            return Reply(status: .notModified, headers: [.contentLength: "0", .eTag: answer.etag, .cacheControl: "no-store"], body: nil)
        }
        return Reply(
            status: .ok,
            headers: [
                .contentType: "application/json; charset=utf-8", .contentLength: String(answer.body.readableBytes), .eTag: answer.etag,
                .cacheControl: "no-store",
            ],
            body: answer.body)
    }
}

extension Response {
    /// A device endpoint's reply as Hummingbird's response.
    fileprivate init(_ reply: DeviceController.Reply) {
        if let body = reply.body {
            self.init(status: reply.status, headers: reply.headers, body: .init(byteBuffer: body))
        } else {
            self.init(status: reply.status, headers: reply.headers)
        }
    }
}
