import Foundation
import KizunaCore
import Testing

@Suite("Update gate policy")
struct GatePolicyTests {
    static func policy(_ text: String) throws -> GatePolicy {
        try GatePolicy(parsing: ConditionTests.json(text))
    }

    static func decide(
        _ policy: GatePolicy,
        appVersion: String,
        os: String = "17.5",
        locale: String = "en-US",
        installId: String = "install-1",
        now: String = "2026-11-30T00:00:00Z"
    ) throws -> UpdateDecision {
        let context = try ConditionTests.context(
            appVersion: appVersion,
            os: os,
            locale: locale,
            installId: installId,
            now: ISO8601DateFormatter().date(from: now)!
        )
        return policy.decide(context, policyVersion: 7, storeURL: "https://apps.apple.com/app/id123")
    }

    @Test func minimumVersionComparesNumerically() throws {
        let policy = try Self.policy(#"{"minimumVersion":"3.10.0"}"#)
        let old = try Self.decide(policy, appVersion: "3.9.0")
        #expect(old.action == .require)
        #expect(old.reason == .belowMinimumVersion)
        #expect(old.url == "https://apps.apple.com/app/id123")
        #expect(old.title == "Update required")
        #expect(old.policyVersion == 7)
        #expect(try Self.decide(policy, appVersion: "3.10.0").action == .none)
        #expect(try Self.decide(policy, appVersion: "3.10").action == .none)
        #expect(try Self.decide(policy, appVersion: "3.10.0-beta.1").action == .require)
        #expect(try Self.decide(policy, appVersion: "10.0").action == .none)
    }

    @Test func blockedVersionsRequireAnUpdateEvenAboveTheMinimum() throws {
        let policy = try Self.policy(#"{"minimumVersion":"3.0","blockedVersions":["3.10.0",{">=":"3.11","<":"3.11.3"}]}"#)
        #expect(try Self.decide(policy, appVersion: "3.10.0").reason == .blockedVersion)
        #expect(try Self.decide(policy, appVersion: "3.10").reason == .blockedVersion)
        #expect(try Self.decide(policy, appVersion: "3.11.2").action == .require)
        #expect(try Self.decide(policy, appVersion: "3.11.3").action == .none)
        #expect(try Self.decide(policy, appVersion: "3.10.1").action == .none)
    }

    @Test func recommendCarriesTheNagInterval() throws {
        let policy = try Self.policy(#"{"minimumVersion":"3.0","recommendedVersion":"3.12","nagIntervalSeconds":3600}"#)
        let decision = try Self.decide(policy, appVersion: "3.11.9")
        #expect(decision.action == .recommend)
        #expect(decision.nagInterval == 3600)
        #expect(try Self.decide(policy, appVersion: "2.9").action == .require)
        #expect(try Self.decide(policy, appVersion: "3.12.0").action == .none)
    }

    @Test func maintenanceLetsAllowListedInstallsThrough() throws {
        let policy = try Self.policy(#"{"maintenance":{"active":true,"allowInstallIds":["tester"]}}"#)
        #expect(try Self.decide(policy, appVersion: "3.0").action == .maintenance)
        #expect(try Self.decide(policy, appVersion: "3.0", installId: "tester").action == .none)
        let scheduled = try Self.policy(
            #"{"maintenance":{"window":{"from":"2026-12-01T01:00","until":"2026-12-01T03:00","timeZone":"Asia/Tokyo"}}}"#
        )
        #expect(try Self.decide(scheduled, appVersion: "3.0", now: "2026-11-30T15:59:00Z").action == .none)
        let inside = try Self.decide(scheduled, appVersion: "3.0", now: "2026-11-30T16:30:00Z")
        #expect(inside.action == .maintenance)
        #expect(inside.until == ISO8601DateFormatter().date(from: "2026-11-30T18:00:00Z"))
        #expect(try Self.decide(scheduled, appVersion: "3.0", now: "2026-11-30T18:00:00Z").action == .none)
    }

    @Test func osMinimumIsRecommendedBeforeTheDeadlineAndRequiredAfterInsideWindows() throws {
        let policy = try Self.policy(
            #"""
            {"minimumOSVersion": {"version": "17.0", "deadline": "2026-12-01T00:00:00Z",
              "windows": [{"days": ["sat", "sun"], "from": "00:00", "until": "24:00", "timeZone": "UTC"}]}}
            """#
        )
        let before = try Self.decide(policy, appVersion: "3.0", os: "16.7", now: "2026-11-28T12:00:00Z")
        #expect(before.action == .recommend)
        #expect(before.reason == .osUpdateRecommended)
        #expect(before.url == nil)
        // After the deadline: required on the weekend window, recommended on a weekday.
        #expect(try Self.decide(policy, appVersion: "3.0", os: "16.7", now: "2026-12-05T12:00:00Z").action == .require)
        #expect(try Self.decide(policy, appVersion: "3.0", os: "16.7", now: "2026-12-02T12:00:00Z").action == .recommend)
        #expect(try Self.decide(policy, appVersion: "3.0", os: "17.0", now: "2026-12-05T12:00:00Z").action == .none)
        let noDeadline = try Self.policy(#"{"minimumOSVersion":{"version":"17"}}"#)
        #expect(try Self.decide(noDeadline, appVersion: "3.0", os: "16.7").action == .require)
    }

    @Test func textsFollowTheDeviceLocaleThenTheDefaultLanguage() throws {
        let policy = try Self.policy(
            #"""
            {"minimumVersion": "4", "defaultLanguage": "ja",
             "notices": {"require": {"url": "https://example.com/status", "texts": {
               "en": {"title": "Please update", "message": "Get 4.0"},
               "ja": {"title": "更新してください", "message": "4.0 を入手"},
               "zh-Hant": {"title": "請更新", "message": "取得 4.0"}}}}}
            """#
        )
        let japanese = try Self.decide(policy, appVersion: "3", locale: "ja_JP")
        #expect(japanese.title == "更新してください")
        #expect(japanese.language == "ja")
        #expect(japanese.url == "https://example.com/status")
        #expect(try Self.decide(policy, appVersion: "3", locale: "zh-Hant-TW").title == "請更新")
        #expect(try Self.decide(policy, appVersion: "3", locale: "en-GB").title == "Please update")
        #expect(try Self.decide(policy, appVersion: "3", locale: "fr-FR").title == "更新してください")
        // No texts given: the built-in Japanese and English ones.
        let plain = try Self.policy(#"{"minimumVersion":"4"}"#)
        #expect(try Self.decide(plain, appVersion: "3", locale: "ja-JP").title == "アップデートが必要です")
        #expect(try Self.decide(plain, appVersion: "3", locale: "de").title == "Update required")
    }

    @Test func invalidPoliciesListEveryProblem() throws {
        let bad = #"""
            {"minimumVersion": "3.10", "recommendedVersion": "3.9", "nagIntervalSeconds": -1,
             "blockedVersions": ["v3", {"~": "3"}], "maintenance": {"active": "yes"},
             "minimumOSVersion": {"deadline": "2027-01-01T00:00Z"},
             "notices": {"require": {"url": "javascript:alert(1)", "texts": {"en": {"title": "t"}}}, "nag": {}},
             "forceUpdate": true}
            """#
        let error = try #require(throws: KizunaError.self) { try Self.policy(bad) }
        #expect(
            Set(error.details.compactMap(\.field)) == [
                "$.recommendedVersion", "$.nagIntervalSeconds", "$.blockedVersions[0]", "$.blockedVersions[1][\"~\"]",
                "$.maintenance.active", "$.minimumOSVersion.version", "$.notices.require.url",
                "$.notices.require.texts.en.message", "$.notices.nag", "$.forceUpdate",
            ]
        )
    }

    /// `gate:check` sends the policy along; a device must not learn which other installs are testers.
    @Test func aDeviceSeesOnlyItselfOnTheTesterList() throws {
        let policy = try Self.policy(#"{"maintenance": {"active": true, "allowInstallIds": ["tester-1", "tester-2"]}, "minimumVersion": "3.0"}"#)
        let allowed = { (installId: String?) in
            policy.source(visibleTo: installId).objectValue?["maintenance"]?.objectValue?["allowInstallIds"]
        }
        #expect(allowed("tester-2") == .array([.string("tester-2")]))
        #expect(allowed("someone-else") == .array([]))
        #expect(allowed(nil) == .array([]))
        #expect(policy.source(visibleTo: "tester-1").objectValue?["minimumVersion"] == .string("3.0"))
        let open = try Self.policy(#"{"minimumVersion": "3.0"}"#)
        #expect(open.source(visibleTo: "tester-1") == open.source)
    }
}
