import Foundation
import Testing

@testable import KizunaCore

@Suite("App validation")
struct AppValidationTests {
    static let valid = NewApp(
        id: "my-app", name: "My App", platform: .ios, bundleId: "com.example.app", teamId: "ABCDE12345", storeURL: "https://apps.apple.com/app/id1")

    @Test(arguments: [
        ("my-app", true), ("a1", true), ("app-2-go", true), ("a", false), ("My-App", false), ("1app", false), ("-app", false),
        ("app-", false), ("my--app", false), ("my_app", false), ("my app", false), ("äpp", false), (String(repeating: "a", count: 64), false),
    ])
    func slugs(_ slug: String, _ valid: Bool) {
        #expect(AppValidation.id.problems(in: slug).isEmpty == valid)
    }

    @Test(arguments: [
        ("ABCDE12345", true), ("0123456789", true), ("abcde12345", false), ("ABCDE1234", false), ("ABCDE123456", false), ("ABCDE-1234", false),
    ])
    func teamIds(_ teamId: String, _ valid: Bool) {
        #expect(AppValidation.teamId.problems(in: teamId).isEmpty == valid)
    }

    @Test(arguments: [
        ("com.example.app", true), ("com.example-co.App2", true), ("jp.co.kizuna", true), ("nodots", false), ("com..app", false),
        ("com.example.", false), ("com.exa mple", false), ("com.例え.app", false),
    ])
    func bundleIds(_ bundleId: String, _ valid: Bool) {
        #expect(AppValidation.bundleId.problems(in: bundleId).isEmpty == valid)
    }

    @Test(arguments: [("https://apps.apple.com/app/id1", true), ("http://apps.apple.com", false), ("apps.apple.com", false), ("https://", false)])
    func storeURLs(_ url: String, _ valid: Bool) {
        #expect(AppValidation.storeURL.problems(in: url).isEmpty == valid)
    }

    @Test func everyProblemIsReportedAtOnce() {
        let bad = NewApp(id: "Bad Id", name: "  ", platform: .ios, bundleId: "x", teamId: nil, storeURL: "ftp://x")
        #expect(throws: KizunaError.self) { try AppValidation.validate(bad) }
        do {
            try AppValidation.validate(bad)
        } catch {
            #expect(error.code == .validationFailed)
            #expect(Set(error.details.compactMap(\.field)) == ["id", "name", "bundleId", "teamId", "storeURL"])
            #expect(error.details.contains { $0.field == "teamId" && $0.code == "required" })
        }
    }

    @Test func androidNeedsNoTeamId() throws {
        try AppValidation.validate(NewApp(id: "droid", name: "Droid", platform: .android, bundleId: "com.example.droid"))
        try AppValidation.validate(Self.valid)
    }

    @Test func patchDistinguishesAbsentFromNull() throws {
        let patch = try JSONDecoder().decode(AppPatch.self, from: Data(#"{"name":"New","storeURL":null}"#.utf8))
        #expect(patch.name == "New" && patch.storeURL == .clear && patch.teamId == nil)
        let reencoded = String(decoding: try JSONEncoder().encode(patch), as: UTF8.self)
        #expect(reencoded.contains(#""storeURL":null"#) && !reencoded.contains("teamId"))
    }

    @Test func errorEnvelopeRoundTripsAndKeepsUnknownCodes() throws {
        let json = #"{"error":{"code":"from_the_future","message":"m","field":"f","details":[{"code":"c","message":"d"}]}}"#
        let error = try JSONDecoder().decode(ErrorEnvelope.self, from: Data(json.utf8)).kizunaError
        #expect(error.code.rawValue == "from_the_future" && error.field == "f" && error.details.count == 1)
        let again = try JSONDecoder().decode(ErrorEnvelope.self, from: try JSONEncoder().encode(ErrorEnvelope(error))).kizunaError
        #expect(again == error)
    }
}
