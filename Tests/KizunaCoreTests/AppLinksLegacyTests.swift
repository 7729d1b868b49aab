import Foundation
import Testing

@testable import KizunaCore

/// Files written for iOS 12 and earlier: `details` with one `appID` and `paths`, `NOT ` excluding, no
/// `components`. iOS still reads them, so the model and the matcher must too (the `doctor` reads other sites' files).
@Suite("applinks legacy files")
struct AppLinksLegacyTests {
    static let file = #"""
        {"applinks": {"apps": [],
          "details": [
            {"appID": "ABCDE12345.com.example.news",
             "paths": ["NOT /videos/wwdc/2010/*", "/videos/wwdc/*", "/wwdc/news/", "/articles/??/*"]},
            {"appID": "ABCDE12345.com.example.shop", "paths": ["NOT /admin/*", "*"]}
          ]},
         "webcredentials": {"apps": ["ABCDE12345.com.example.shop"]}}
        """#

    static func links() throws -> AppLinks {
        try #require(try JSONDecoder().decode(AppSiteAssociation.self, from: Data(file.utf8)).applinks)
    }

    @Test func aLegacyOnlyFileDecodesWithItsAppIDAndPaths() throws {
        let links = try Self.links()
        #expect(links.apps == [])
        #expect(links.details.map(\.appIDs) == [["ABCDE12345.com.example.news"], ["ABCDE12345.com.example.shop"]])
        #expect(links.details.allSatisfy { $0.isLegacyOnly })
        #expect(links.details[0].paths?.first == "NOT /videos/wwdc/2010/*")
    }

    @Test(
        arguments: [
            ("https://example.com/videos/wwdc/2015/keynote", "ABCDE12345.com.example.news"),
            ("https://example.com/wwdc/news/", "ABCDE12345.com.example.news"),
            ("https://example.com/articles/ab/story", "ABCDE12345.com.example.news"),
            // `NOT` excludes from that detail only: the next detail's "*" still takes it, in order.
            ("https://example.com/videos/wwdc/2010/intro", "ABCDE12345.com.example.shop"),
            ("https://example.com/articles/abc/story", "ABCDE12345.com.example.shop"),
            ("https://example.com/WWDC/news/", "ABCDE12345.com.example.shop"),
            ("https://example.com/anything?x=1", "ABCDE12345.com.example.shop"),
            ("https://example.com/admin/users", nil),
        ] as [(String, String?)])
    func legacyPathsMatchInOrder(_ url: String, _ app: String?) throws {
        #expect(try Self.links().appID(opening: try #require(URL(string: url))) == app)
    }

    @Test func aLegacyOnlyFileEncodesBackAsItWas() throws {
        let association = try JSONDecoder().decode(AppSiteAssociation.self, from: Data(Self.file.utf8))
        let again = try JSONDecoder().decode(AppSiteAssociation.self, from: try association.encoded())
        #expect(again == association)
        let detail = try #require(JSONSerialization.jsonObject(with: try association.encoded()) as? [String: Any])
        let details = try #require((detail["applinks"] as? [String: Any])?["details"] as? [[String: Any]])
        #expect(details.allSatisfy { $0["components"] == nil && $0["appIDs"] == nil }, "no keys the file never had")
    }

    @Test func aDetailWithNeitherFormOfAppIDIsRefused() throws {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(AppSiteAssociation.self, from: Data(#"{"applinks": {"details": [{"paths": ["*"]}]}}"#.utf8))
        }
    }
}
