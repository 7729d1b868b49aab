import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import Testing

@testable import KizunaServer

/// Schemathesis, an outside client, fuzzes a live server against the `openapi.yaml` it serves: no 5xx, every status
/// and content type documented, every body matching its schema. With the admin token over every operation, and with
/// a user session over `/v1/me…`. `.ci/run` installs it; elsewhere the test is skipped, with the reason, when
/// `python3 -m schemathesis` is missing — under `CI=true` it runs and fails instead.
@Suite("openapi.yaml contract (schemathesis)")
struct ContractTests {
    static let isCI = ProcessInfo.processInfo.environment["CI"] == "true"
    /// Whether pip installed Schemathesis (its `schemathesis` command is on the PATH): found without starting a process.
    static let installed: Bool = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").contains {
        FileManager.default.isExecutableFile(atPath: "\($0)/schemathesis")
    }

    /// The runner script, next to this test target.
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Contract/schemathesis_run.py")

    @Test(.enabled(if: installed || isCI, "Schemathesis is not installed (pip install schemathesis); .ci/run installs it"))
    func theServerKeepsItsContractUnderFuzzing() async throws {
        try #require(Self.installed, "CI=true: Schemathesis must be installed (pip install schemathesis)")
        try await withTestServer(configure: {
            $0.passwordParameters = .init(logN: 10, r: 8, p: 1)
            $0.deviceRateLimit = DeviceRateLimit(perMinute: 10_000_000, burst: 10_000_000)
        }) { server in
            let port = try #require(server.client.port)
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            let grant = try await server.send(
                .post, "/v1/auth/sign-up", json: #"{"identifier":"fuzz@example.com","password":"correct horse battery"}"#, authorized: false
            ).decode(SessionGrant.self)
            // The spec as the server serves it.
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kizuna-contract-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let spec = directory.appendingPathComponent("openapi.yaml")
            try Data(try OpenAPIDocument.bytes()).write(to: spec)

            let run = try await Python.run([
                Self.script.path, "--base-url", "http://127.0.0.1:\(port)", "--admin-token", server.adminToken, "--user-token",
                grant.session.accessToken, "--app", "shop", "--spec", spec.path, "--report-dir", directory.appendingPathComponent("reports").path,
            ])
            #expect(run.status == 0, "schemathesis found contract breaks:\n\(run.output.suffix(6000))")
            print("schemathesis", run.output.components(separatedBy: "=== summary").last ?? "")
        }
    }
}
