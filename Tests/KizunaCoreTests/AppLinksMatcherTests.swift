import Foundation
import Testing

@testable import KizunaCore

@Suite("applinks matcher")
struct AppLinksMatcherTests {
    static let shop = "ABCDE12345.com.example.shop"
    static let clip = "ABCDE12345.com.example.shop.Clip"

    /// Written the way it appears in an apple-app-site-association file, so decoding is covered too.
    static let file = #"""
        {"applinks": {
          "substitutionVariables": {"menu": ["lunch", "dinner*"]},
          "details": [
            {"appIDs": ["ABCDE12345.com.example.shop"],
             "components": [
               {"/": "/admin/*", "exclude": true, "comment": "staff only, handled by the clip below"},
               {"/": "/products/*"},
               {"/": "/$(lang)/help/*"},
               {"/": "/search", "?": {"q": "?*"}},
               {"/": "/promo/*", "#": "no_universal_links", "exclude": true},
               {"/": "/promo/*"},
               {"/": "/case/*", "caseSensitive": false},
               {"/": "/file?.pdf"},
               {"/": "/menu/$(menu)"},
               {"/": "/café", "percentEncoded": false},
               {"/": "/raw", "?": "ref=*"}
             ]},
            {"appIDs": ["ABCDE12345.com.example.shop.Clip"],
             "components": [{"/": "/admin/*"}, {"/": "/buy/*"}]}
          ]},
         "webcredentials": {"apps": ["ABCDE12345.com.example.shop"]},
         "appclips": {"apps": ["ABCDE12345.com.example.shop.Clip"]}}
        """#

    static func association() throws -> AppSiteAssociation {
        try JSONDecoder().decode(AppSiteAssociation.self, from: Data(file.utf8))
    }

    @Test(arguments: [
        ("/products/42", shop),
        ("/products/", shop),
        ("/Products/42", nil),  // case-sensitive by default
        ("/admin/users", clip),  // excluded for the shop, claimed by the next detail
        ("/buy/1", clip),
        ("/ja/help/topic", shop),
        ("/zz/help/topic", nil),  // not an ISO 639 language
        ("/search?q=shoes", shop),
        ("/search", nil),  // "?*" requires the item
        ("/search?q=", nil),
        ("/search?page=2&q=hat", shop),
        ("/promo/summer#no_universal_links", nil),  // excluded, and no later detail claims it
        ("/promo/summer", shop),
        ("/CASE/Anything", shop),
        ("/file1.pdf", shop),
        ("/file12.pdf", nil),
        ("/menu/lunch", shop),
        ("/menu/dinner-for-two", shop),
        ("/menu/breakfast", nil),
        ("/caf%C3%A9", shop),  // matched decoded
        ("/raw?ref=mail", shop),
        ("/raw?utm=1&ref=mail", nil),  // a whole-query pattern sees the whole query
        ("/", nil),
    ])
    func firstMatchDecides(path: String, app: String?) throws {
        let url = try #require(URL(string: "https://shop.example.com\(path)"))
        #expect(try Self.association().applinks?.appID(opening: url) == app, "\(path)")
    }

    @Test func componentsKeepApplesKeysWhenEncoded() throws {
        let association = try Self.association()
        #expect(association.webcredentials?.apps == [Self.shop] && association.appclips?.apps == [Self.clip])
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let component = AppLinks.Component(path: "/search", query: .items(["q": "?*"]), fragment: "top", exclude: true)
        #expect(String(decoding: try encoder.encode(component), as: UTF8.self) == ##"{"#":"top","/":"/search","?":{"q":"?*"},"exclude":true}"##)
        let reencoded = try JSONDecoder().decode(AppSiteAssociation.self, from: encoder.encode(association))
        #expect(reencoded == association)
    }

    @Test(arguments: [
        ("*", "", true), ("*", "/a/b", true), ("/a*b", "/ab", true), ("/a*b", "/a/x/b", true), ("/a*b", "/a/x/c", false),
        ("?", "", false), ("??", "ab", true), ("a**b", "axxb", true), ("$(digit)$(digit)", "42", true), ("$(digit)", "x", false),
        ("$(unknown)", "x", false), ("$(open", "$(open", true),
    ])
    func patterns(pattern: String, text: String, matches: Bool) {
        #expect(AppLinkPattern(pattern).matches(text, caseSensitive: true, variables: AppLinkPattern.builtInVariables) == matches)
    }
}
