import Foundation
import KizunaCore
import Testing

@Suite("Remote config templates")
struct RemoteConfigTemplateTests {
    static let template = #"""
        {
          "conditions": [
            {"name": "testers", "when": {"installId": ["tester"]}},
            {"name": "japan", "when": {"country": ["JP"]}, "description": "Japanese storefront"},
            {"name": "new", "when": {"appVersion": {">=": "3.10"}}}
          ],
          "parameters": {
            "welcome": {"type": "string", "default": "Hello", "conditionalValues": {"japan": "こんにちは", "testers": "Hi tester"}},
            "maxItems": {"type": "number", "default": 20, "conditionalValues": {"new": 50}},
            "newUI": {"type": "bool", "default": false, "conditionalValues": {"new": true}, "group": "ui"},
            "theme": {"type": "json", "default": {"tint": "blue", "sizes": [1, 2]}}
          }
        }
        """#

    @Test func firstTrueConditionInTemplateOrderWins() throws {
        let template = try RemoteConfigTemplate(parsing: ConditionTests.json(Self.template))
        let japanese = template.evaluate(try ConditionTests.context(appVersion: "3.9", country: "JP", installId: "a"))
        #expect(japanese["welcome"] == .string("こんにちは"))
        #expect(japanese["maxItems"] == .number(20))
        #expect(japanese["newUI"] == .bool(false))
        #expect(japanese["theme"] == .object(["tint": .string("blue"), "sizes": .array([.number(1), .number(2)])]))
        // "testers" comes before "japan" in the template, whatever order the parameter lists its values in.
        let tester = template.evaluate(try ConditionTests.context(appVersion: "3.10.0", country: "JP", installId: "tester"))
        #expect(tester["welcome"] == .string("Hi tester"))
        #expect(tester["maxItems"] == .number(50))
        #expect(tester["newUI"] == .bool(true))
    }

    @Test func everyProblemIsListedWithItsPath() throws {
        let bad = #"""
            {
              "conditions": [
                {"name": "a", "when": {"appVersion": {">=": "3.x"}}},
                {"name": "a", "when": {"platform": ["ios"]}},
                {"when": {"country": ["JP"]}}
              ],
              "parameters": {
                "count": {"type": "number", "default": "20"},
                "flag": {"type": "boolean", "default": true},
                "greeting": {"type": "string", "default": "hi", "conditionalValues": {"nope": "yo", "a": 3}},
                "9lives": {"type": "json", "default": null},
                "ok": {"type": "string", "default": "fine", "extra": 1}
              },
              "version": 3
            }
            """#
        let error = try #require(throws: KizunaError.self) { try RemoteConfigTemplate(parsing: ConditionTests.json(bad)) }
        #expect(error.code == .validationFailed)
        let found = Set(error.details.compactMap(\.field))
        let expected: Set<String> = [
            "$.conditions[0].when.appVersion[\">=\"]",
            "$.conditions[1].name",
            "$.conditions[2].name",
            "$.parameters.count.default",
            "$.parameters.flag.type",
            "$.parameters.greeting.conditionalValues.nope",
            "$.parameters.greeting.conditionalValues.a",
            "$.parameters[\"9lives\"]",
            "$.parameters.ok.extra",
            "$.version",
        ]
        #expect(found == expected)
    }

    @Test func numbersMustBeFiniteAndJSONMayBeAnyValue() throws {
        let ok = #"{"parameters":{"a":{"type":"json","default":[1,"two",null]},"b":{"type":"number","default":-1.5e3}}}"#
        #expect(try RemoteConfigTemplate(parsing: ConditionTests.json(ok)).parameters.count == 2)
        #expect(RemoteConfigTemplate.empty.evaluate(try ConditionTests.context()).isEmpty)
    }

    /// The outcomes a memo keys answers by decide the values: evaluating from them gives what the rule — the first
    /// condition in template order that holds and that the parameter has a value for — gives, worked out here from
    /// the published JSON alone; devices with equal outcomes get equal values.
    @Test func valuesDependOnlyOnTheConditionOutcomes() throws {
        let source = try ConditionTests.json(Self.template)
        let template = try RemoteConfigTemplate(parsing: source)
        var byOutcomes: [ConditionOutcomes: [String: JSONValue]] = [:]
        for version in ["3.9", "3.10.0", "4.1"] {
            for country in ["JP", "US"] {
                for install in ["tester", "a", "b"] {
                    let context = try ConditionTests.context(appVersion: version, country: country, installId: install)
                    let outcomes = template.outcomes(context)
                    let values = template.evaluate(outcomes)
                    var expected: [String: JSONValue] = [:]
                    for (key, parameter) in source["parameters"]?.objectValue ?? [:] {
                        let conditional = parameter["conditionalValues"]?.objectValue ?? [:]
                        let winner = template.conditions.first { conditional[$0.name] != nil && $0.condition.evaluate(context) }
                        expected[key] = winner.flatMap { conditional[$0.name] } ?? parameter["default"]
                    }
                    #expect(values == expected, "\(version) \(country) \(install)")
                    #expect(template.evaluate(context) == expected)
                    if let earlier = byOutcomes[outcomes] { #expect(earlier == values) }
                    byOutcomes[outcomes] = values
                }
            }
        }
        #expect(byOutcomes.count > 1 && byOutcomes.count < 18, "devices share answers: \(byOutcomes.count) of 18")
    }
}
