import Foundation
import KizunaCore
import Testing

@testable import KizunaClient
@testable import KizunaServer

/// Signs gate mirrors as `kizuna serve` does, with the key it derives from a server secret.
struct MirrorSigner: Sendable {
    let key: MirrorSigningKey

    /// - Parameter secret: The server secret, 64 hex digits.
    init(secret: String) {
        key = MirrorSigningKey(.derived(SecretKeySource(.text(secret))))
    }

    /// The public key and its id, as `kizuna gate mirror --public-key` prints them.
    func publicKey() throws -> GateMirror.KeyInfo {
        try key.publicKey()
    }

    /// The mirror file of `policy` at `version`, for app `shop`.
    func sign(_ policy: JSONValue, version: Int64) throws -> Data {
        let content = GateMirror.Content(app: "shop", version: version, policy: policy, storeURL: nil, signedAt: Date())
        return try GateMirror.sign(content, with: try key.key())
    }
}

/// The update gate when the API errors or is slow, not only when it is unreachable: the first signed mirror that
/// verifies decides, however many come before it unreachable, missing or signed by a key the app does not trust.
/// (The time limit is for a gate that would wait on the silent API past its own timeout.)
@Suite("UpdateGate falls back to signed mirrors", .timeLimit(.minutes(1)))
struct UpdateGateMirrorTests {
    static let trusted = MirrorSigner(secret: String(repeating: "ab", count: 32))
    static let stranger = MirrorSigner(secret: String(repeating: "cd", count: 32))
    static let maintenance: JSONValue = .object(["maintenance": .object(["active": true])])

    /// A gate that never reached the API (no policy held), on the stub's API, trusting ``trusted``'s key.
    static func gate(_ stub: GateStub, mirrors: [URL], timeout: Duration = .seconds(10)) throws -> UpdateGate {
        let app = try KizunaApp(
            server: stub.url, appId: "shop", directory: LiveServer.temporaryDirectory(), device: DeviceContext(appVersion: "1.0"), timeout: timeout)
        let key = try trusted.publicKey().publicKey
        return UpdateGate(app: app, mirror: try GateMirrorSettings(urls: mirrors, publicKeys: [key]))
    }

    /// What the API answers: Kizuna's own 500 and 503 (`internal_error`, `unavailable`), and a proxy's 502 page in
    /// front of it (`transport`).
    static func failure(_ code: Int) throws -> GateStub.API {
        func envelope(_ error: KizunaError) throws -> String {
            try String(decoding: WireFormat.encoder().encode(ErrorEnvelope(error)), as: UTF8.self)
        }
        switch code {
        case 500: return .failing(code: 500, body: try envelope(KizunaError(.internalError, "The server failed.")))
        case 503: return .failing(code: 503, body: try envelope(KizunaError(.unavailable, "The server is busy.", retryAfter: 5)))
        default: return .failing(code: code, body: "<html><body><h1>\(code) Bad Gateway</h1></body></html>")
        }
    }

    @Test(arguments: [500, 503, 502])
    func anAPIAnsweringAnErrorLeavesTheDecisionToTheMirror(_ code: Int) async throws {
        let mirror = try Self.trusted.sign(Self.maintenance, version: 4)
        try await GateStub.run(api: try Self.failure(code), mirrors: ["gate.json": mirror]) { stub in
            let gate = try Self.gate(stub, mirrors: [stub.mirror("gate.json")])
            let check = try await gate.check()
            #expect(check.source == .mirror && check.decision.action == .maintenance && check.shouldPresent, "HTTP \(code)")
            #expect(check.decision.policyVersion == 4 && check.mirrorProblem == nil)
            #expect(stub.requests == ["gate:check", "gate.json"], "the API first, then the mirror")
            #expect(gate.current?.action == .maintenance, "kept for the next launch")
        }
    }

    @Test func anAPIThatNeverAnswersLeavesTheDecisionToTheMirrorAfterTheTimeout() async throws {
        let mirror = try Self.trusted.sign(Self.maintenance, version: 4)
        try await GateStub.run(api: .silent, mirrors: ["gate.json": mirror]) { stub in
            // The request timeout is the deadline for the API, and then for each mirror: short here, but not so short
            // that a loaded machine misses it for the mirror too (2 s did, once, in a full CI run on two cores).
            let gate = try Self.gate(stub, mirrors: [stub.mirror("gate.json")], timeout: .seconds(5))
            let check = try await gate.check()
            #expect(check.source == .mirror && check.decision.action == .maintenance && check.mirrorProblem == nil)
            #expect(stub.requests == ["gate:check", "gate.json"], "the API took the request and held it")
        }
    }

    @Test func mirrorsAreTriedInOrderPastOnesMissingOrUnreachable() async throws {
        let mirror = try Self.trusted.sign(Self.maintenance, version: 4)
        try await GateStub.run(api: try Self.failure(503), mirrors: ["gate.json": mirror]) { stub in
            let unreachable = try #require(URL(string: "http://127.0.0.1:9/kizuna/shop/gate.json"))
            let gate = try Self.gate(stub, mirrors: [stub.mirror("missing.json"), unreachable, stub.mirror("gate.json")])
            let check = try await gate.check()
            #expect(check.source == .mirror && check.decision.action == .maintenance && check.decision.policyVersion == 4)
            #expect(check.mirrorProblem == nil, "a mirror verified: the ones before it are no problem")
            #expect(stub.requests == ["gate:check", "missing.json", "gate.json"])
        }
    }

    @Test func aMirrorSignedByAnUntrustedKeyIsPassedOverForATrustedOne() async throws {
        let files: [String: Data] = try [
            "gate.json": Self.trusted.sign(Self.maintenance, version: 4),
            // Signed, and newer, but not by a key the app ships with: what a compromised static host would serve.
            "untrusted.json": Self.stranger.sign(.object([:]), version: 9),
        ]
        try await GateStub.run(api: try Self.failure(500), mirrors: files) { stub in
            let gate = try Self.gate(stub, mirrors: [stub.mirror("untrusted.json"), stub.mirror("gate.json")])
            let check = try await gate.check()
            #expect(check.source == .mirror && check.decision.action == .maintenance && check.decision.policyVersion == 4)
            #expect(check.mirrorProblem == nil)
            #expect(stub.requests == ["gate:check", "untrusted.json", "gate.json"])

            // With no trusted mirror after it, nothing is adopted, and the untrusted key is the problem reported.
            let alone = try Self.gate(stub, mirrors: [stub.mirror("missing.json"), stub.mirror("untrusted.json")])
            let refused = try await alone.check()
            #expect(refused.source == .noPolicy && refused.decision.action == .none && !refused.shouldPresent)
            let problem = try #require(refused.mirrorProblem)
            let strangerKeyId = try Self.stranger.publicKey().keyId
            #expect(problem.code == .badSignature && problem.message.contains(strangerKeyId))
        }
    }
}
