import Foundation
import Testing

@testable import KizunaCore

/// `kizuna config import --firebase`: Firebase's condition language and template format, converted.
@Suite("Firebase import")
struct FirebaseImportTests {
    /// Tests/Fixtures/Firebase, written from Firebase's documented REST template format.
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../Fixtures/Firebase")
        .standardizedFileURL

    static func fixture(_ name: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(contentsOf: fixtures.appendingPathComponent(name)))
    }

    static func translate(_ expression: String, appId: String? = nil) throws -> FirebaseConditionTranslator.Outcome {
        FirebaseConditionTranslator(firebaseAppId: appId).translate(try FirebaseExpression(parsing: expression))
    }

    /// `kizuna config set` and the import read a value written as text the same way.
    @Test func textValuesReadOneWayForTheCommandLineAndTheImport() throws {
        typealias ValueType = RemoteConfigTemplate.ValueType
        #expect(try ValueType.bool.value(fromText: " TRUE ") == .bool(true) && ValueType.bool.value(fromText: "false") == .bool(false))
        #expect(try ValueType.number.value(fromText: " 1e3") == .number(1000))
        #expect(try ValueType.string.value(fromText: " x ") == .string(" x "), "a string is kept as written")
        #expect(try ValueType.json.value(fromText: #"{"a":[1]}"#) == .object(["a": .array([.number(1)])]))
        #expect(throws: KizunaError(.validationFailed, "'nan' is not a number")) { try ValueType.number.value(fromText: "nan") }
        #expect(throws: KizunaError(.validationFailed, "'yes' is not true or false")) { try ValueType.bool.value(fromText: "yes") }
    }

    @Test func precedenceIsNotThenAndThenOr() throws {
        let atom = { (text: String) in try FirebaseExpression(parsing: text) }
        let a = try atom("percent <= 1")
        let b = try atom("percent <= 2")
        let c = try atom("percent <= 3")
        #expect(try FirebaseExpression(parsing: "percent <= 1 || percent <= 2 && !percent <= 3") == .or([a, .and([b, .not(c)])]))
        #expect(try FirebaseExpression(parsing: "(percent <= 1 || percent <= 2) && percent <= 3") == .and([.or([a, b]), c]))
        #expect(try FirebaseExpression(parsing: "!(true) && false") == .and([.not(.constant(true)), .constant(false)]))
        let method = try FirebaseExpression(parsing: "app.version.>=(['3.1.0'])")
        guard case .atom(let parsed) = method else { Issue.record("not an atom: \(method)"); return }
        #expect(parsed.element == "app.version" && parsed.test == .method(">=", [.list([.string("3.1.0")])]))
        let keyed = try FirebaseExpression(parsing: "app.userProperty['plan'].exactlyMatches(['pro'])")
        guard case .atom(let property) = keyed else { Issue.record("not an atom: \(keyed)"); return }
        #expect(property.key == "plan" && property.test == .method("exactlyMatches", [.list([.string("pro")])]))
    }

    @Test(arguments: [
        ("device.os == 'ios' &&", "the end"),
        ("app.version >= '1' ||| true", "unexpected"),
        ("device.country in ['jp'", "expected ']'"),
        ("device.os == 'ios", "unterminated string"),
        ("percent between 0 25", "expected 'and'"),
    ])
    func malformedExpressionsSayWhere(expression: String, expected: String) {
        #expect {
            try FirebaseExpression(parsing: expression)
        } throws: { error in
            "\(error)".contains(expected) && "\(error)".contains("at character")
        }
    }

    @Test(arguments: [
        ("device.os == 'ios'", #"{"platform":["ios"]}"#),
        ("device.os != 'android'", #"{"not":{"platform":["android"]}}"#),
        ("app.version.>=(['3.1.0'])", #"{"appVersion":{">=":"3.1.0"}}"#),
        ("app.version < '4.0'", #"{"appVersion":{"<":"4.0"}}"#),
        ("app.version.exactlyMatches(['2.1.0', '2.1.1'])", #"{"any":[{"appVersion":{"==":"2.1.0"}},{"appVersion":{"==":"2.1.1"}}]}"#),
        ("app.build.<(['42'])", #"{"buildNumber":{"<":"42"}}"#),
        ("device.language in ['ja', 'en']", #"{"language":["ja","en"]}"#),
        ("device.language in ['ja', 'en_US']", #"{"locale":["ja","en-us"]}"#),
        ("device.country in ['jp', 'us']", #"{"country":["JP","US"]}"#),
        ("percent <= 25", #"{"percent":{"seed":"firebase-percent","from":0,"to":25}}"#),
        ("percent > 90", #"{"percent":{"seed":"firebase-percent","from":90,"to":100}}"#),
        ("percent('seed') between 10 and 12.5", #"{"percent":{"seed":"seed","from":10,"to":12.5}}"#),
        ("app.userProperty['plan'].exactlyMatches(['pro'])", #"{"attribute":{"name":"plan","string":{"==":"pro"}}}"#),
        ("app.userProperty['age'] >= 18", #"{"attribute":{"name":"age","number":{">=":18}}}"#),
        ("app.customSignal['tier'] == 'gold'", #"{"attribute":{"name":"tier","string":{"==":"gold"}}}"#),
        (
            "dateTime < dateTime('2026-12-01T00:00:00', 'Asia/Tokyo')",
            #"{"dateTime":{"until":"2026-12-01T00:00:00","timeZone":"Asia/Tokyo"}}"#
        ),
        ("device.dateTime >= dateTime('2026-12-01T00:00:00+09:00')", #"{"dateTime":{"from":"2026-12-01T00:00:00+09:00"}}"#),
        ("true || false", #"{"any":[{"all":[]},{"any":[]}]}"#),
        ("!(device.os == 'ios' || device.os == 'android')", #"{"not":{"any":[{"platform":["ios"]},{"platform":["android"]}]}}"#),
    ])
    func translatableAtoms(expression: String, kizuna: String) throws {
        let outcome = try Self.translate(expression)
        #expect(outcome.untranslated == [])
        #expect(outcome.condition == (try ConditionTests.json(kizuna)))
        var reader = DocumentReader()
        #expect(Condition.parse(try #require(outcome.condition), at: .root, reader: &reader) != nil, "\(reader.report.problems)")
    }

    @Test(arguments: [
        ("app.audiences.inAtLeastOne(['Purchasers'])", "audiences"),
        ("app.firstOpenTimestamp >= ('2022-10-31T14:37:47', 'America/Los_Angeles')", "first-open"),
        ("app.firebaseInstallationId in ['cXyZ']", "installation ids"),
        ("app.version.contains(['beta'])", "as numbers, not as text"),
        ("app.userProperty['plan'].contains(['pro'])", "'contains' has no equivalent"),
        ("device.os == 'web'", "'web' is not a Kizuna platform"),
        ("dateTime >= dateTime('2026-12-01T00:00:00')", "device's own time zone"),
        ("app.id == '1:1:ios:a'", "--firebase-app-id"),
        ("app.operatingSystemAndVersion.inOsAndVersion(['Windows'])", "'app.operatingSystemAndVersion' has no Kizuna equivalent"),
    ])
    func untranslatableAtomsSayWhy(expression: String, reason: String) throws {
        let outcome = try Self.translate("device.os == 'ios' && \(expression)")
        #expect(outcome.condition == nil, "never widened to the translatable part")
        #expect(outcome.untranslated.count == 1)
        #expect(outcome.untranslated.first?.contains(reason) == true, "\(outcome.untranslated)")
    }

    @Test func appIdTestsNeedTheFirebaseAppIdOfThisApp() throws {
        #expect(try Self.translate("app.id == '1:1:ios:a'", appId: "1:1:ios:a").condition == ["all": []])
        #expect(try Self.translate("app.id == '1:1:android:b'", appId: "1:1:ios:a").condition == ["any": []])
        #expect(try Self.translate("app.id != '1:1:android:b'", appId: "1:1:ios:a").condition == ["all": []])
    }

    @Test func aRealisticTemplateConvertsAndListsWhatItCannot() throws {
        let imported = FirebaseTemplateImport(firebase: try Self.fixture("remote-config-template.json"))
        let template = try RemoteConfigTemplate(parsing: imported.template)
        #expect(
            template.conditions.map(\.name) == [
                "iOS 3.10+ in Japan", "old_builds", "japanese_or_us_english", "new_checkout_rollout", "ten_percent", "pro_or_adult_outside_us",
                "winter_sale",
            ])
        #expect(imported.conditionCount == (9, 7) && imported.parameterCount == (8, 7))
        #expect(
            imported.problems.map(\.path) == [
                "$.conditions[7].expression", "$.conditions[8].expression", "$.parameters.new_checkout_enabled.conditionalValues.buyers_on_ios",
                "$.parameters.onboarding_steps.conditionalValues.ios_app",
            ])
        #expect(imported.problems[0].message.contains("buyers_on_ios") && imported.problems[0].message.contains("app.audiences.inAtLeastOne"))

        let parameters = try #require(imported.template["parameters"])
        #expect(
            parameters["welcome_message"] == [
                "type": "string", "default": "Welcome!", "description": "Headline on the first screen",
                "conditionalValues": ["iOS 3.10+ in Japan": "ようこそ！", "japanese_or_us_english": "Welcome back!"],
            ])
        #expect(parameters["new_checkout_enabled"]?["default"] == false)
        #expect(parameters["new_checkout_enabled"]?["conditionalValues"] == ["new_checkout_rollout": true])
        #expect(parameters["cart_limit"]?["conditionalValues"] == ["pro_or_adult_outside_us": 50, "ten_percent": 25.5])
        #expect(parameters["onboarding_steps"]?["default"] == ["intro", "permissions", "sign_up"])
        #expect(parameters["force_update"]?["default"]?["version"] == "3.10.0")
        #expect(parameters["legacy_banner_text"] == nil)
        #expect(
            parameters["discount_rate"] == [
                "type": "number", "default": 0.1, "group": "checkout", "description": "Share taken off the cart total",
                "conditionalValues": ["winter_sale": 0.25],
            ])
        #expect(parameters["checkout_banner_color"]?["group"] == "checkout")
        #expect(
            imported.template["conditions"]?.arrayValue?.first?["when"]
                == (try ConditionTests.json(
                    #"{"all":[{"platform":["ios"]},{"appVersion":{">=":"3.10.0"}},{"country":["JP"]}]}"#)))
        #expect(imported.notes.contains { $0.contains("new_checkout_rollout") && $0.contains("new buckets") })
        #expect(imported.notes.contains { $0.contains("legacy_banner_text") && $0.contains("app's own default") })
        #expect(imported.notes.contains { $0.contains("attribute 'plan'") })

        // The converted template answers as the Firebase one would for these devices.
        let japan = template.evaluate(try ConditionTests.context())
        #expect(japan["welcome_message"] == "ようこそ！" && japan["onboarding_steps"] == ["intro", "permissions", "sign_up"])
        let american = template.evaluate(try ConditionTests.context(appVersion: "3.9.0", build: "400", locale: "en_US", country: "us"))
        #expect(american["welcome_message"] == "Welcome back!" && american["onboarding_steps"] == ["intro"])
        let french = template.evaluate(try ConditionTests.context(locale: "fr_FR", country: "fr", attributes: ["plan": .string("team")]))
        #expect(french["welcome_message"] == "Welcome!" && french["cart_limit"] == 50)
        let adult = template.evaluate(try ConditionTests.context(country: "jp", attributes: ["age": .number(20)]))
        #expect(adult["cart_limit"] == 50)
        let sale = template.evaluate(try ConditionTests.context(now: ISO8601DateFormatter().date(from: "2026-12-10T00:00:00Z")!))
        #expect(sale["checkout_banner_color"] == "#C62828" && sale["discount_rate"] == 0.25)
        #expect(template.evaluate(try ConditionTests.context())["discount_rate"] == 0.1)
    }

    @Test func theFirebaseAppIdTranslatesAppIdConditions() throws {
        let firebase = try Self.fixture("remote-config-template.json")
        let imported = FirebaseTemplateImport(firebase: firebase, translator: .init(firebaseAppId: "1:1234567890:ios:0a1b2c3d4e5f6789"))
        #expect(imported.problems.map(\.path) == ["$.conditions[7].expression", "$.parameters.new_checkout_enabled.conditionalValues.buyers_on_ios"])
        let template = try RemoteConfigTemplate(parsing: imported.template)
        #expect(template.evaluate(try ConditionTests.context())["onboarding_steps"] == ["intro", "sign_up"])
    }

    @Test func valuesThatCannotBeTypedAreListed() throws {
        let firebase = try ConditionTests.json(
            #"""
            {"conditions": [{"name": "ios", "expression": "device.os == 'ios'"}, {"name": "tiny", "expression": "percent <= 0.001"}],
             "parameters": {
               "n": {"defaultValue": {"value": "twenty"}, "valueType": "NUMBER"},
               "b": {"defaultValue": {"value": "yes"}, "valueType": "BOOLEAN"},
               "j": {"defaultValue": {"value": "{"}, "valueType": "JSON"},
               "s": {"defaultValue": {"value": "x"}, "conditionalValues": {"ios": {"useInAppDefault": true}, "tiny": {"value": "y"}, "gone": {"value": "z"}}},
               "r": {"defaultValue": {"value": "1"}, "conditionalValues": {"ios": {"rolloutValue": {"rolloutId": "rollout_1", "value": "2"}}}, "valueType": "NUMBER"},
               "d": {"defaultValue": {"useInAppDefault": true}, "conditionalValues": {"ios": {"value": "z"}}},
               "t": {"defaultValue": {"value": "x"}, "valueType": "DATE"}
             }}
            """#)
        let imported = FirebaseTemplateImport(firebase: firebase)
        #expect(
            imported.problems.map(\.description) == [
                "$.conditions[1].expression: condition 'tiny' was left out: must be a percentage from 0 to 100 with at most two decimals",
                "$.parameters.b.defaultValue.value: 'yes' is not true or false",
                "$.parameters.d.defaultValue: uses the in-app default, which a Kizuna template cannot say beside conditional values",
                "$.parameters.j.defaultValue.value: '{' is not JSON",
                "$.parameters.n.defaultValue.value: 'twenty' is not a number",
                "$.parameters.r.conditionalValues.ios: is a Firebase-managed rolloutValue, which has no Kizuna equivalent",
                "$.parameters.s.conditionalValues.gone: names no condition in $.conditions",
                "$.parameters.s.conditionalValues.ios: uses the in-app default, which a Kizuna conditional value cannot",
                "$.parameters.s.conditionalValues.tiny: left out with its condition 'tiny', which was not translated",
                "$.parameters.t.valueType: 'DATE' is not a Firebase value type (STRING, BOOLEAN, NUMBER, JSON)",
            ])
        #expect(
            imported.template == [
                "conditions": [["name": "ios", "when": ["platform": ["ios"]]]],
                "parameters": ["r": ["type": "number", "default": 1], "s": ["type": "string", "default": "x"]],
            ])
        #expect(FirebaseTemplateImport(firebase: "not a template").problems.map(\.path) == ["$"])
    }
}
