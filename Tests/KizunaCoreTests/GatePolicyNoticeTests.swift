import Foundation
import KizunaCore
import Testing

/// What a notice's button opens, and OS advisories: the parts of a gate policy a team uses during an incident or
/// the week a new iOS ships.
@Suite("Update gate notices and OS advisories")
struct GatePolicyNoticeTests {
    typealias Gate = GatePolicyTests

    @Test func maintenanceAndOSNoticesNeverDefaultToTheStorePage() throws {
        let policy = try Gate.policy(#"{"maintenance": {"active": true}}"#)
        let maintenance = try Gate.decide(policy, appVersion: "3.0")
        #expect(
            maintenance.action == .maintenance && maintenance.url == nil,
            "a maintenance alert that opens the App Store sends people to the wrong place")
        let os = try Gate.decide(try Gate.policy(#"{"minimumOSVersion": {"version": "18"}}"#), appVersion: "3.0", os: "17.5")
        #expect(os.reason == .osBelowMinimum && os.url == nil)
        // An update is the way out of require and recommend: their default is still the store page.
        let store = "https://apps.apple.com/app/id123"
        #expect(try Gate.decide(try Gate.policy(#"{"minimumVersion": "4"}"#), appVersion: "3.0").url == store)
        #expect(try Gate.decide(try Gate.policy(#"{"recommendedVersion": "4"}"#), appVersion: "3.0").url == store)
        #expect(try Gate.decide(try Gate.policy(#"{"blockedVersions": ["3.0"]}"#), appVersion: "3.0").url == store)
        // A status page given for maintenance is used.
        let status = try Gate.policy(#"{"maintenance": {"active": true}, "notices": {"maintenance": {"url": "https://status.example.com"}}}"#)
        #expect(try Gate.decide(status, appVersion: "3.0").url == "https://status.example.com")
    }

    @Test func aNullURLMeansNoButtonEvenForRequire() throws {
        let policy = try Gate.policy(
            #"{"minimumVersion": "4", "notices": {"require": {"url": null, "texts": {"en": {"title": "Closed", "message": "This service has ended."}}}}}"#
        )
        let decision = try Gate.decide(policy, appVersion: "3.0")
        #expect(decision.action == .require && decision.isBlocking)
        #expect(decision.url == nil && decision.title == "Closed")
        // Only null or an absolute URL: anything else names the field.
        let error = try #require(throws: KizunaError.self) { try Gate.policy(#"{"notices": {"maintenance": {"url": 7}}}"#) }
        #expect(error.details.compactMap(\.field) == ["$.notices.maintenance.url"])
    }

    @Test func anOSAdvisoryRecommendsOrRequiresWithItsOwnNotice() throws {
        let policy = try Gate.policy(
            #"""
            {"recommendedVersion": "3.5",
             "osAdvisories": [
               {"osVersion": {">=": "26.0", "<": "26.0.2"}, "platforms": ["ios"], "action": "require",
                "notice": {"url": "https://example.com/ios26", "texts": {"en": {"title": "Not on iOS 26.0 yet", "message": "Update iOS to 26.0.2."}}}},
               {"osVersion": {">=": "26.0.2", "<": "26.1"}},
               {"osVersion": "25.9", "platforms": ["macos"]}]}
            """#
        )
        let broken = try Gate.decide(policy, appVersion: "3.0", os: "26.0.1")
        #expect(broken.action == .require && broken.reason == .osAdvisory)
        #expect(broken.title == "Not on iOS 26.0 yet" && broken.url == "https://example.com/ios26")

        // Untested but not known broken: recommend, ahead of the app's own recommendation, built-in texts, no link.
        let untested = try Gate.decide(policy, appVersion: "3.0", os: "26.0.3", locale: "ja-JP")
        #expect(untested.action == .recommend && untested.reason == .osAdvisory)
        #expect(untested.title == "このOSバージョンには未対応です" && untested.url == nil && untested.nagInterval == GatePolicy.defaultNagInterval)

        #expect(try Gate.decide(policy, appVersion: "3.0", os: "26.1").reason == .belowRecommendedVersion)
        #expect(try Gate.decide(policy, appVersion: "3.5", os: "25.9").action == .none, "the 25.9 advisory is for macOS only")
        // Maintenance and a required app update still come first.
        let stricter = try Gate.policy(#"{"minimumVersion": "4", "osAdvisories": [{"osVersion": "26.0", "action": "require"}]}"#)
        #expect(try Gate.decide(stricter, appVersion: "3.0", os: "26.0").reason == .belowMinimumVersion)
    }

    @Test func aRequiringAdvisoryWinsOverAnEarlierRecommendingOne() throws {
        let policy = try Gate.policy(
            #"{"osAdvisories": [{"osVersion": {">=": "26"}}, {"osVersion": "26.0", "action": "require"}], "notices": {"osAdvisory": {"url": "https://example.com/os"}}}"#
        )
        let decision = try Gate.decide(policy, appVersion: "3.0", os: "26.0")
        #expect(decision.action == .require && decision.url == "https://example.com/os", "notices.osAdvisory is the advisories' shared notice")
        #expect(try Gate.decide(policy, appVersion: "3.0", os: "26.1").action == .recommend)
    }

    @Test func badAdvisoriesNameTheirField() throws {
        let error = try #require(throws: KizunaError.self) {
            try Gate.policy(
                #"{"osAdvisories": [{"platforms": ["symbian"], "action": "block"}, {"osVersion": "x"}, {"osVersion": "26", "until": 1}]}"#)
        }
        #expect(
            Set(error.details.compactMap(\.field)) == [
                "$.osAdvisories[0].osVersion", "$.osAdvisories[0].platforms[0]", "$.osAdvisories[0].action", "$.osAdvisories[1].osVersion",
                "$.osAdvisories[2].until",
            ])
    }
}
