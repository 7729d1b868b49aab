import Foundation
import Testing

@testable import KizunaCore

/// `kizuna gate import --force-alert`: the hand-made `{"title","message","version","url"}` parameter as gate fields.
@Suite("Firebase import: force-update alert")
struct ForceAlertImportTests {
    @Test func theParameterBecomesTheMinimumVersionAndItsNotice() throws {
        let alert = try ForceAlertImport(parameter: try FirebaseImportTests.fixture("force-update.json"), language: "ja")
        let policy = try GatePolicy(parsing: alert.policy)
        #expect(alert.policy["minimumVersion"] == "3.10.0" && alert.policy["defaultLanguage"] == "ja")
        #expect(alert.policy["notices"]?["require"]?["url"] == "https://apps.apple.com/app/id1234567890")
        // Compared as versions, the bug of the hand-made check ("3.10.0" < "3.9.0" as text) is gone.
        let old = try GatePolicyTests.decide(policy, appVersion: "3.9.0", locale: "ja-JP")
        #expect(old.action == .require && old.title == "アップデートのお願い" && old.url == "https://apps.apple.com/app/id1234567890")
        #expect(try GatePolicyTests.decide(policy, appVersion: "3.10.0").action == .none)
        // The only texts are Japanese, and the default language says so: an English device reads them too.
        #expect(try GatePolicyTests.decide(policy, appVersion: "1.0", locale: "en-US").title == "アップデートのお願い")
    }

    @Test func mergingKeepsTheLivePolicysOtherFieldsAndLanguages() throws {
        let alert = try ForceAlertImport(
            parameter: ["title": "Update", "message": "Please update.", "version": "4.0", "url": ""], language: "en")
        let live: [String: JSONValue] = [
            "minimumVersion": "3.0.0", "maintenance": ["active": false], "defaultLanguage": "ja",
            "notices": [
                "require": ["url": "https://example.com/old", "texts": ["ja": ["title": "更新", "message": "更新してください"]]],
                "recommend": ["texts": ["ja": ["title": "新版", "message": "新しい版があります"]]],
            ],
        ]
        let merged = alert.merged(into: live)
        #expect(
            merged == [
                "minimumVersion": "4.0", "maintenance": ["active": false], "defaultLanguage": "ja",
                "notices": [
                    "require": [
                        "url": nil,
                        "texts": ["ja": ["title": "更新", "message": "更新してください"], "en": ["title": "Update", "message": "Please update."]],
                    ],
                    "recommend": ["texts": ["ja": ["title": "新版", "message": "新しい版があります"]]],
                ],
            ])
        // No url: an alert without a button, as the hand-made one was — not the store page.
        let decision = try GatePolicy(parsing: .object(merged)).decide(
            try EvaluationContext(device: DeviceContext(appVersion: "3.9", locale: "en"), appId: "shop", now: Date()), policyVersion: 1,
            storeURL: "https://apps.apple.com/app/id1")
        #expect(decision.action == .require && decision.url == nil && decision.title == "Update")
    }

    @Test func aParameterWithConditionalValuesIsNotGuessedAt() throws {
        let template: JSONValue = [
            "parameters": [
                "force_update": [
                    "defaultValue": ["value": #"{"title": "t", "message": "m", "version": "2.0"}"#],
                    "conditionalValues": ["android": ["value": #"{"title": "t", "message": "m", "version": "9.0"}"#]],
                    "valueType": "JSON",
                ]
            ]
        ]
        let error = try #require(throws: KizunaError.self) { try ForceAlertImport.parameter("force_update", inFirebaseTemplate: template) }
        #expect(error.field == "parameters.force_update.conditionalValues" && error.message.contains("(android)"))
    }

    @Test func everyProblemIsListedWithItsField() throws {
        #expect {
            try ForceAlertImport(parameter: ["title": 1, "version": "v3.10", "url": "apps.apple.com/app/id1"], language: "ja")
        } throws: { error in
            let fields = (error as? KizunaError)?.details.compactMap(\.field) ?? []
            return fields == ["$.message", "$.version", "$.title", "$.url"]
        }
        #expect(throws: KizunaError.self) { try ForceAlertImport(parameter: ["title": "t", "message": "m", "version": "1"], language: "日本語") }
    }

    @Test func theParameterCanComeFromAWholeFirebaseTemplate() throws {
        let template = try FirebaseImportTests.fixture("remote-config-template.json")
        let parameter = try ForceAlertImport.parameter("force_update", inFirebaseTemplate: template)
        #expect(parameter["version"] == "3.10.0" && parameter["title"] == "アップデートのお願い")
        #expect(throws: KizunaError.self) { try ForceAlertImport.parameter("missing", inFirebaseTemplate: template) }
        #expect(throws: KizunaError.self) { try ForceAlertImport.parameter("welcome_message", inFirebaseTemplate: template) }
    }
}
