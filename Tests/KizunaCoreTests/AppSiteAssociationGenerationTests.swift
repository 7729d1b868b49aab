import Foundation
import Testing

@testable import KizunaCore

@Suite("apple-app-site-association generation")
struct AppSiteAssociationGenerationTests {
    static let entries = [
        AppSiteAssociation.Entry(
            teamId: "ABCDE12345", bundleId: "com.example.shop",
            settings: AssociatedDomainSettings(
                appLinks: [
                    AppLinks.Component(path: "/admin/*", exclude: true),
                    AppLinks.Component(path: "/products/*"),
                    AppLinks.Component(path: "/search", query: .items(["q": "?*"])),
                ],
                appClips: ["com.example.shop.Clip"], legacyPaths: true)),
        AppSiteAssociation.Entry(teamId: "ABCDE12345", bundleId: "com.example.staff", settings: AssociatedDomainSettings()),
        AppSiteAssociation.Entry(
            teamId: "ZYXWV98765", bundleId: "com.partner.app",
            settings: AssociatedDomainSettings(webCredentials: false, appLinks: [AppLinks.Component(path: "/partner/*")])),
    ]

    @Test func theFileHasEveryAppInOrderInBothForms() throws {
        let file = AppSiteAssociation(generating: Self.entries)
        let json = String(decoding: try file.encoded(), as: UTF8.self)
        #expect(
            json
                == #"{"appclips":{"apps":["ABCDE12345.com.example.shop.Clip"]},"applinks":{"apps":[],"details":[{"appID":"ABCDE12345.com.example.shop","appIDs":["ABCDE12345.com.example.shop"],"components":[{"/":"/admin/*","exclude":true},{"/":"/products/*"},{"/":"/search","?":{"q":"?*"}}],"paths":["NOT /admin/*","/products/*"]},{"appIDs":["ZYXWV98765.com.partner.app"],"components":[{"/":"/partner/*"}]}]},"webcredentials":{"apps":["ABCDE12345.com.example.shop","ABCDE12345.com.example.staff"]}}"#
        )
        let links = try #require(file.applinks)
        #expect(links.appID(opening: URL(string: "https://example.com/products/1")!) == "ABCDE12345.com.example.shop")
        #expect(links.appID(opening: URL(string: "https://example.com/partner/x")!) == "ZYXWV98765.com.partner.app")
        #expect(links.appID(opening: URL(string: "https://example.com/admin/x")!) == nil)
    }

    @Test func noAppsGiveAnEmptyObject() throws {
        #expect(String(decoding: try AppSiteAssociation(generating: []).encoded(), as: UTF8.self) == "{}")
    }

    @Test func aFileOver128KBIsRefusedWithItsSize() {
        let rules = (0..<3000).map { AppLinks.Component(path: "/catalogue/section-\($0)/*", comment: "section \($0) of the catalogue") }
        let file = AppSiteAssociation(
            generating: [.init(teamId: "ABCDE12345", bundleId: "com.example.shop", settings: AssociatedDomainSettings(appLinks: rules))])
        let error = #expect(throws: KizunaError.self) { try file.encoded() }
        #expect(error?.code == .validationFailed && error?.field == "applinks")
        #expect(error?.message.contains("Apple reads at most 131072") == true)
        #expect(error?.message.range(of: #"would be \d{6} bytes"#, options: .regularExpression) != nil)
    }
}
