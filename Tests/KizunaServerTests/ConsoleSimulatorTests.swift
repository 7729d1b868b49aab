import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import Testing

@testable import KizunaServer

/// The device simulator: `config:simulate` in the admin API, and the console's page over it.
@Suite("Config simulation: admin API and console")
struct ConsoleSimulatorTests {
    static let template = #"""
        {"conditions": [
            {"name": "weekend", "when": {"weekly": {"days": ["sat", "sun"], "from": "00:00", "until": "23:59", "timeZone": "Asia/Tokyo"}}},
            {"name": "pro", "when": {"attribute": {"name": "plan", "string": {"==": "pro"}}}},
            {"name": "japan", "when": {"locale": ["ja"]}}
         ],
         "parameters": {
            "banner": {"type": "string", "default": "Hello", "conditionalValues": {"weekend": "Weekend sale", "japan": "こんにちは"}},
            "limit": {"type": "number", "default": 10, "conditionalValues": {"pro": 100}}
         }}
        """#

    static func start(_ body: @escaping @Sendable (TestServer) async throws -> Void) async throws {
        try await withTestServer(.sqlite) { server in
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            try await UpdateGateTests.publish(server, "config", Self.template)
            try await body(server)
        }
    }

    @Test func theAdminAPISaysWhatADeviceGetsAndWhy() async throws {
        try await Self.start { server in
            // 2026-11-28 is a Saturday in Tokyo.
            let saturday = try await server.send(
                .post, "/v1/admin/apps/shop/config:simulate?at=2026-11-28T12:00:00%2B09:00",
                json: #"{"appVersion":"3.1","locale":"ja-JP","attributes":{"plan":"pro"}}"#)
            #expect(saturday.status == .ok, "\(saturday.text)")
            let result = try saturday.decode(ConfigSimulation.self)
            #expect(result.version == 1)
            #expect(result.values["banner"] == .init(value: .string("Weekend sale"), condition: "weekend"))
            #expect(result.values["limit"] == .init(value: .number(100), condition: "pro"))
            #expect(result.conditions.map(\.holds) == [true, true, true])
            let monday = try await server.send(
                .post, "/v1/admin/apps/shop/config:simulate?at=2026-11-30T12:00:00Z", json: #"{"appVersion":"3.1","locale":"en-US"}"#)
            let plain = try monday.decode(ConfigSimulation.self)
            #expect(
                plain.values["banner"] == .init(value: .string("Hello"), condition: nil) && plain.conditions.map(\.holds) == [false, false, false])

            let badVersion = try await server.send(.post, "/v1/admin/apps/shop/config:simulate", json: #"{"appVersion":"three"}"#)
            #expect(badVersion.status == .badRequest && badVersion.error?.details.first?.field == "$.appVersion")
            let badTime = try await server.send(.post, "/v1/admin/apps/shop/config:simulate?at=tomorrow", json: #"{"appVersion":"3.1"}"#)
            #expect(badTime.status == .badRequest && badTime.error?.field == "at")
            let unknown = try await server.send(.post, "/v1/admin/apps/nope/config:simulate", json: #"{"appVersion":"3.1"}"#)
            #expect(unknown.status == .notFound)
            #expect(
                try await server.send(.post, "/v1/admin/apps/shop/config:simulate", json: #"{"appVersion":"3.1"}"#, authorized: false).status
                    == .unauthorized)
        }
    }

    @Test func theConsoleShowsTheValuesAndWhichConditionDecidedEach() async throws {
        try await Self.start { server in
            var browser = ConsoleClient(server)
            try await browser.signIn()
            let form = try await browser.get("/console/apps/shop/config/simulate")
            #expect(form.status == .ok && form.text.contains(#"<input id="appVersion" name="appVersion" type="text""#))
            #expect(!form.text.contains("simulated-values"))

            let query =
                "appVersion=3.1&locale=ja-JP&platform=ios&attributes=\(ConsoleClient.encode("plan=pro\nbeta=true"))&at=\(ConsoleClient.encode("2026-11-28T12:00:00+09:00"))"
            let result = try await browser.get("/console/apps/shop/config/simulate?\(query)")
            #expect(result.status == .ok, "\(result.text)")
            #expect(
                result.text.contains(
                    #"<tr><th scope="row" class="mono">banner</th><td><code>&quot;Weekend sale&quot;</code></td><td><span class="mono">weekend</span></td></tr>"#
                ))
            #expect(
                result.text.contains(
                    #"<tr><th scope="row" class="mono">limit</th><td><code>100</code></td><td><span class="mono">pro</span></td></tr>"#))
            #expect(result.text.contains(#"<tr class="holds"><td>3</td><th scope="row" class="mono">japan</th>"#))
            #expect(result.text.contains(#"value="3.1""#) && result.text.contains(#"<option value="ios" selected>iOS</option>"#))

            let bad = try await browser.get("/console/apps/shop/config/simulate?appVersion=three")
            #expect(
                bad.status == .badRequest
                    && bad.text.contains(
                        #"<input id="appVersion" name="appVersion" type="text" value="three" aria-describedby="appVersion-errors" aria-invalid="true""#
                    ))
            let badAttributes = try await browser.get("/console/apps/shop/config/simulate?appVersion=3.1&attributes=plan")
            #expect(badAttributes.status == .badRequest && badAttributes.text.contains("Write each attribute as name=value: plan"))
        }
    }
}
