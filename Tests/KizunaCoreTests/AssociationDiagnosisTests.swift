import Foundation
import KizunaCore
import Testing

/// apple-app-site-association answers judged as iOS judges them.
@Suite("Associated-domains diagnosis")
struct AssociationDiagnosisTests {
    static let appID = "ABCDE12345.com.example.shop"
    static let url = "https://shop.example.com/.well-known/apple-app-site-association"
    static let good = Data(
        #"""
        {"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.shop"],
          "components": [{"/": "/account/*", "exclude": true}, {"/": "/products/*"}]}]},
         "webcredentials": {"apps": ["ABCDE12345.com.example.shop"]}}
        """#.utf8)

    static func diagnose(
        status: Int?, type: String? = "application/json", body: Data = good, location: String? = nil, urls: [String] = [],
        expected: Data? = nil
    ) -> AssociationDiagnosis {
        AssociationDiagnosis(
            host: "shop.example.com",
            wellKnown: .init(url: url, status: status, contentType: type, location: location, body: body, error: status == nil ? "refused" : nil),
            root: nil, appID: appID, urls: urls.compactMap(URL.init(string:)), expected: expected)
    }

    static func statuses(_ diagnosis: AssociationDiagnosis) -> [String: ReleaseCheck.Status] {
        Dictionary(diagnosis.checks.map { ($0.id, $0.status) }, uniquingKeysWith: { first, _ in first })
    }

    @Test func aGoodFileAssociatesAndTellsWhichAppOpensEachURL() {
        let diagnosis = Self.diagnose(
            status: 200, type: "application/json; charset=utf-8",
            urls: ["https://shop.example.com/products/42", "https://shop.example.com/account/settings", "https://shop.example.com/"],
            expected: Self.good)
        #expect(diagnosis.outcome == .associated && diagnosis.worst == nil, "\(diagnosis.checks)")
        #expect(
            Self.statuses(diagnosis) == [
                "answer": .passed, "content-type": .passed, "size": .passed, "json": .passed, "webcredentials": .passed, "applinks": .passed,
                "registry": .passed,
            ])
        #expect(diagnosis.openings.map(\.appID) == [Self.appID, nil, nil], "excluded first, then no rule")
    }

    @Test func redirectsAndClientErrorsDenyServerErrorsAreRetried() {
        let redirect = Self.diagnose(status: 301, location: "https://www.example.com/.well-known/apple-app-site-association")
        #expect(redirect.outcome == .denied && Self.statuses(redirect)["answer"] == .error)
        #expect(redirect.checks[0].message.contains("does not follow redirects") && redirect.checks[0].message.contains("www.example.com"))
        let missing = Self.diagnose(status: 404)
        #expect(missing.outcome == .denied && missing.checks[0].message.contains("denied until the app is next installed or updated"))
        let down = Self.diagnose(status: 503)
        #expect(down.outcome == .retried && down.checks[0].message.contains("every 3 hours, up to 8 times"))
        #expect(Self.diagnose(status: nil).outcome == .retried)
    }

    @Test func theFileMustBeJSONWithinSizeAndReadable() {
        let plain = Self.diagnose(status: 200, type: "text/plain")
        let contentType = plain.checks.first { $0.id == "content-type" }
        #expect(contentType?.status == .error && contentType?.message.contains("text/plain") == true)
        let padded = Data(#"{"webcredentials": {"apps": ["\#(Self.appID)"]}, "pad": "\#(String(repeating: "x", count: 140_000))"}"#.utf8)
        let oversized = Self.diagnose(status: 200, body: padded)
        #expect(oversized.outcome == .denied && Self.statuses(oversized)["size"] == .error)
        let broken = Self.diagnose(status: 200, body: Data(#"{"applinks": {"details": [{"appIDs": "one"}]}}"#.utf8))
        #expect(broken.outcome == .denied && Self.statuses(broken)["json"] == .error)
        #expect(broken.checks.first { $0.id == "json" }?.message.contains("applinks.details") == true, "the path to the fault")
        let empty = Self.diagnose(status: 200, body: Data("{}".utf8))
        #expect(Self.statuses(empty)["services"] == .error && Self.statuses(empty)["app-id"] == .error)
    }

    @Test func legacyPathsStillOpenAppsAndAreFlagged() {
        let legacy = Data(#"{"applinks": {"apps": [], "details": [{"appID": "\#(Self.appID)", "paths": ["/products/*", "NOT /account/*"]}]}}"#.utf8)
        let diagnosis = Self.diagnose(status: 200, body: legacy, urls: ["https://shop.example.com/products/1"])
        #expect(diagnosis.outcome == .associated && Self.statuses(diagnosis)["applinks.legacy"] == .warning)
        #expect(Self.statuses(diagnosis)["webcredentials"] == .warning && Self.statuses(diagnosis)["applinks"] == .passed)
        #expect(diagnosis.openings.first?.appID == Self.appID)
    }

    @Test func aLiveFileThatIsNotTheRegistrysIsAnError() {
        let diagnosis = Self.diagnose(status: 200, expected: Data(#"{"webcredentials": {"apps": ["OTHER.app"]}}"#.utf8))
        let registry = diagnosis.checks.first { $0.id == "registry" }
        #expect(registry?.status == .error && registry?.message.contains("applinks, webcredentials") == true, "\(registry?.message ?? "")")
    }
}
