import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import Testing

@testable import KizunaServer

/// A condition as rows of rules in the remote config form: shown from the live template, posted back unchanged as the
/// same conditions, a rule added in a spare row, a value that does not read and the admin API's refusal each at the
/// rule they concern; a condition rules cannot show keeps its JSON.
@Suite("Admin console: condition rules")
struct ConsoleConfigRulesTests {
    static let conditions: JSONValue = [
        ["name": "ja", "when": ["locale": ["ja"]]],
        ["name": "v2", "when": ["all": [["appVersion": [">=": "2.0", "<": "3.0"]], ["platform": ["ios", "macos"]]]]],
        ["name": "half", "when": ["percent": ["seed": "new-ui", "from": 0, "to": 50]]],
        ["name": "either", "when": ["any": [["country": ["JP"]], ["language": ["ja"]]]]],
    ]

    @Test func conditionsAreEditedAsRulesAndRoundTrip() async throws {
        try await withTestServer { server in
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            let document: JSONValue = [
                "conditions": Self.conditions, "parameters": ["limit": ["type": "number", "default": 3, "conditionalValues": ["v2": 5]]],
            ]
            let first = try await server.send(
                .post, "/v1/admin/apps/shop/config:publish", json: String(decoding: try JSONEncoder().encode(["document": document]), as: UTF8.self),
                headers: [.ifMatch: "*"])
            #expect(first.status == .ok, "\(first.text)")
            var browser = ConsoleClient(server)
            try await browser.signIn()
            let path = "/console/apps/shop/config/form"
            let page = try await browser.get(path)
            var fields = try ConsoleClient.fields(of: page.text, action: path)
            // Each rule a kind and a short value; two spare rules below; `any` kept as JSON.
            #expect(fields["c0-r0-kind"] == "locale" && fields["c0-r0-value"] == "ja" && fields["c0-r1-kind"] == "" && fields["c0-r2-kind"] == "")
            #expect(fields["c1-r0-kind"] == "appVersion" && fields["c1-r0-value"] == ">= 2.0 < 3.0")
            #expect(fields["c1-r1-kind"] == "platform" && fields["c1-r1-value"] == "ios, macos")
            #expect(fields["c2-r0-kind"] == "percent" && fields["c2-r0-value"] == "new-ui 0-50")
            #expect(fields["c3-when"] == #"{"any":[{"country":["JP"]},{"language":["ja"]}]}"# && fields["c3-r0-kind"] == nil)
            #expect(fields["c4-r0-kind"] == "" && fields["c4-when"] == nil, "a spare condition starts as rules")
            #expect(page.text.contains(#"aria-label="v2: Rule 1""#))

            // Posted back unchanged: the same conditions.
            fields["message"] = "Unchanged"
            let same = try await browser.post(path, fields)
            #expect(same.status == .seeOther, "\(same.text)")
            #expect(try await ConsoleConfigTests.live(server).document["conditions"] == Self.conditions)

            // A rule that does not read, and a value without its kind: at their cells, nothing sent.
            fields = try ConsoleClient.fields(of: try await browser.get(path).text, action: path)
            var bad = fields
            bad["c1-r0-value"] = ">= "
            bad["c0-r1-value"] = "JP"
            let refused = try await browser.post(path, bad)
            #expect(
                refused.status == .badRequest && refused.text.contains(#"id="c1-r0-value-errors""#) && refused.text.contains("&gt;= 3.0 &lt; 4.0"))
            #expect(refused.text.contains(#"id="c0-r1-value-errors""#) && refused.text.contains("Choose what the rule checks."))
            #expect(refused.text.contains(#"value="&gt;= ""#), "the value kept as typed")
            // A condition left without rules.
            var empty = fields
            empty["c0-r0-kind"] = ""
            empty["c0-r0-value"] = ""
            #expect(try await browser.post(path, empty).text.contains("Add at least one rule."))
            // Refused by the admin API: the path of the platform that is not one names its rule.
            var windows = fields
            windows["c1-r1-value"] = "ios, windows"
            let notAPlatform = try await browser.post(path, windows)
            #expect(notAPlatform.status == .badRequest && notAPlatform.text.contains(#"id="c1-r1-value-errors""#), "\(notAPlatform.text)")
            #expect(try await ConsoleConfigTests.live(server).version == 2)

            // A rule added in a spare row: the condition now needs a country too.
            fields["c1-r2-kind"] = "country"
            fields["c1-r2-value"] = "JP"
            fields["message"] = "Japan only"
            #expect(try await browser.post(path, fields).status == .seeOther)
            let live = try await ConsoleConfigTests.live(server)
            #expect(live.version == 3)
            #expect(
                live.document["conditions"]?.arrayValue?.dropFirst().first?["when"]
                    == ["all": [["appVersion": [">=": "2.0", "<": "3.0"]], ["platform": ["ios", "macos"]], ["country": ["JP"]]]])
        }
    }

    @Test func shortTextsReadBackWhatTheyShow() {
        #expect(ConsoleFormText.comparison(">=2.0<3.0") == [">=": "2.0", "<": "3.0"])
        #expect(ConsoleFormText.comparison("2.0") == ["==": "2.0"])
        #expect(ConsoleFormText.comparison(">= 2.0 >= 3.0") == nil, "an operator twice")
        #expect(ConsoleFormText.comparison(">= 2.0 3.0") == nil, "an operand without its operator")
        #expect(ConsoleFormText.comparison("") == nil)
        #expect(ConsoleFormText.comparison([">=": "2.0", "<": "3.0", "!=": "2.5"]) == ">= 2.0 < 3.0 != 2.5")
        #expect(ConsoleFormText.comparison([">=": 2]) == nil, "a number is not shown as text")
        #expect(ConsoleFormText.comparison(["~": "2"]) == nil)
        #expect(ConsoleFormText.list(["a", "b"]) == "a, b" && ConsoleFormText.list(["a,b"]) == nil)
        #expect(ConsoleFormText.list("ios,tvos  macos") == ["ios", "tvos", "macos"])
        #expect(ConditionRule.rows(of: ["not": ["locale": ["ja"]]]) == nil)
        #expect(ConditionRule.rows(of: ["all": []]) == [])
        #expect(ConditionRule(kind: "percent", value: "seed 12.5-30").condition() == ["percent": ["seed": "seed", "from": 12.5, "to": 30]])
        #expect(ConditionRule(kind: "percent", value: "12.5-30").condition() == nil)
    }
}
