import Foundation
import KizunaCore
import Testing

@Suite("Conditions")
struct ConditionTests {
    static func json(_ text: String) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
    }

    static func condition(_ text: String) throws -> Condition {
        let template = try RemoteConfigTemplate(
            parsing: json(
                #"{"conditions":[{"name":"c","when":\#(text)}],"parameters":{"p":{"type":"bool","default":false,"conditionalValues":{"c":true}}}}"#)
        )
        return template.conditions[0].condition
    }

    static func context(
        appVersion: String = "3.10.0",
        build: String? = "451",
        platform: Platform? = .ios,
        os: String? = "17.5.1",
        locale: String? = "ja_JP",
        country: String? = "jp",
        installId: String? = "install-1",
        attributes: [String: AttributeValue]? = nil,
        now: Date = Date(timeIntervalSince1970: 1_796_000_000)
    ) throws -> EvaluationContext {
        try EvaluationContext(
            device: DeviceContext(
                appVersion: appVersion,
                buildNumber: build,
                platform: platform,
                osVersion: os,
                locale: locale,
                country: country,
                installId: installId,
                attributes: attributes
            ),
            appId: "app-1",
            now: now
        )
    }

    /// A condition, and whether it holds for the default context (3.10.0 build 451, iOS 17.5.1, ja_JP, JP,
    /// 2026-11-30 09:53 in Tokyo).
    static let vectors: [(String, Bool)] = [
        (#"{"appVersion":{">=":"3.10"}}"#, true),
        (#"{"appVersion":{"<":"3.9.0"}}"#, false),
        (#"{"appVersion":{">=":"3.0","<":"4.0"}}"#, true),
        (#"{"appVersion":{"==":"3.10.0.0"}}"#, true),
        (#"{"appVersion":{"!=":"3.10"}}"#, false),
        (#"{"appVersion":{">":"3.10.0-rc.1"}}"#, true),
        (#"{"buildNumber":{">":"99"}}"#, true),
        (#"{"buildNumber":{"<=":"450"}}"#, false),
        (#"{"osVersion":{">=":"17.5"}}"#, true),
        (#"{"osVersion":{"<":"17.5.1"}}"#, false),
        (#"{"platform":["ios","macos"]}"#, true),
        (#"{"platform":["android"]}"#, false),
        (#"{"appId":["app-1"]}"#, true),
        (#"{"locale":["ja"]}"#, true),
        (#"{"locale":["ja-JP"]}"#, true),
        (#"{"locale":["ja-Hira"]}"#, false),
        (#"{"language":["JA","en"]}"#, true),
        (#"{"country":["JP"]}"#, true),
        (#"{"country":["us"]}"#, false),
        (#"{"installId":["install-1","x"]}"#, true),
        (#"{"percent":{"seed":"s","to":100}}"#, true),
        (#"{"percent":{"seed":"s","to":0}}"#, false),
        (#"{"all":[]}"#, true),
        (#"{"any":[]}"#, false),
        (#"{"not":{"platform":["android"]}}"#, true),
        (#"{"all":[{"appVersion":{">=":"3"}},{"any":[{"country":["US"]},{"not":{"language":["en"]}}]}]}"#, true),
        (#"{"dateTime":{"from":"2026-01-01T00:00:00Z"}}"#, true),
        (#"{"dateTime":{"until":"2026-01-01T00:00:00+09:00"}}"#, false),
        (#"{"dateTime":{"from":"2026-11-30T00:00","until":"2026-12-01T00:00","timeZone":"Asia/Tokyo"}}"#, true),
        (#"{"dateTime":{"from":"2026-11-30T10:00","timeZone":"Asia/Tokyo"}}"#, false),
    ]

    @Test(arguments: vectors)
    func evaluates(_ text: String, _ expected: Bool) throws {
        #expect(try Self.condition(text).evaluate(Self.context()) == expected)
    }

    @Test func customAttributesAreTyped() throws {
        let context = try Self.context(attributes: ["plan": .string("pro"), "age": .number(26), "beta": .bool(true), "sdk": .string("2.10.1")])
        #expect(try Self.condition(#"{"attribute":{"name":"plan","string":{"==":"pro"}}}"#).evaluate(context))
        #expect(try Self.condition(#"{"attribute":{"name":"age","number":{">=":18,"<":30}}}"#).evaluate(context))
        #expect(try Self.condition(#"{"attribute":{"name":"beta","bool":{"==":true}}}"#).evaluate(context))
        #expect(try !Self.condition(#"{"attribute":{"name":"beta","bool":{"!=":true}}}"#).evaluate(context))
        #expect(try Self.condition(#"{"attribute":{"name":"sdk","version":{">":"2.9"}}}"#).evaluate(context))
        // A value of another type, or no value, never matches.
        #expect(try !Self.condition(#"{"attribute":{"name":"age","string":{"==":"26"}}}"#).evaluate(context))
        #expect(try !Self.condition(#"{"attribute":{"name":"missing","number":{">":0}}}"#).evaluate(context))
    }

    @Test func percentageIsStickyAndGrowsWithoutReshuffling() throws {
        let ids = (0..<2000).map { "install-\($0)" }
        let ten = PercentRollout(seed: "new-ui", lower: 0, upper: 1000)
        let twenty = PercentRollout(seed: "new-ui", lower: 0, upper: 2000)
        let inTen = Set(ids.filter(ten.contains))
        let inTwenty = Set(ids.filter(twenty.contains))
        #expect(inTen.isSubset(of: inTwenty))
        // Roughly the right share (binomial, n=2000: 10 % ± 3 %), and the same answer every time.
        #expect((140...260).contains(inTen.count))
        #expect((320...480).contains(inTwenty.count))
        #expect(Set(ids.filter(ten.contains)) == inTen)
        // Known buckets, computed outside Swift (Python hashlib: SHA-256 of "seed/install", first 8 bytes big-endian,
        // mod 10,000): server and SDK on every platform must put an install in the same bucket.
        #expect(PercentRollout.bucket(seed: "new-ui", installId: "install-1") == 993)
        #expect(PercentRollout.bucket(seed: "new-ui", installId: "install-2") == 8672)
        let other = Set(ids.filter(PercentRollout(seed: "other", lower: 0, upper: 1000).contains))
        #expect(other != inTen)
    }

    @Test func weeklyWindowsUseLocalTimeAndRunOvernight() throws {
        let window = try Self.condition(#"{"weekly":{"days":["fri"],"from":"22:00","until":"06:00","timeZone":"Asia/Tokyo"}}"#)
        // 2026-11-20 is a Friday. 13:30Z is 22:30 in Tokyo on Friday; 20:00Z is 05:00 Saturday.
        func at(_ iso: String) throws -> Bool {
            try window.evaluate(Self.context(now: ISO8601DateFormatter().date(from: iso)!))
        }
        #expect(try at("2026-11-20T13:30:00Z"))
        #expect(try at("2026-11-20T20:00:00Z"))
        #expect(try !at("2026-11-20T21:00:00Z"))  // 06:00 Saturday: closed
        #expect(try !at("2026-11-20T12:59:00Z"))  // 21:59 Friday
        #expect(try !at("2026-11-19T13:30:00Z"))  // Thursday night
        let daytime = try Self.condition(#"{"weekly":{"days":["sat","sun"],"from":"09:00","until":"24:00","timeZone":"+09:00"}}"#)
        #expect(try daytime.evaluate(Self.context(now: ISO8601DateFormatter().date(from: "2026-11-21T14:59:00Z")!)))
        #expect(try !daytime.evaluate(Self.context(now: ISO8601DateFormatter().date(from: "2026-11-20T23:59:00Z")!)))
    }

    @Test func missingDeviceFactsNeverMatch() throws {
        let context = try Self.context(build: nil, platform: nil, os: nil, locale: nil, country: nil, installId: nil)
        for text in [
            #"{"buildNumber":{">":"1"}}"#, #"{"platform":["ios"]}"#, #"{"osVersion":{">":"1"}}"#, #"{"locale":["ja"]}"#,
            #"{"country":["JP"]}"#, #"{"installId":["x"]}"#, #"{"percent":{"seed":"s","to":100}}"#,
        ] {
            #expect(try !Self.condition(text).evaluate(context), "\(text)")
        }
    }

    /// A bad condition, and the path and message fragment its problem must carry.
    static let invalid: [(String, String, String)] = [
        (#"{"appVersion":{">=":"v3"}}"#, "$.conditions[0].when.appVersion[\">=\"]", "\"v3\" is not a valid version"),
        (#"{"appVersion":{"=>":"3"}}"#, "$.conditions[0].when.appVersion[\"=>\"]", "is not an operator"),
        (#"{"appVersion":{}}"#, "$.conditions[0].when.appVersion", "at least one comparison"),
        (#"{"all":[{"platform":["ios"]},{"any":[{"not":{"country":"JP"}}]}]}"#, "$.conditions[0].when.all[1].any[0].not.country", "must be an array"),
        (#"{"platform":["iphone"]}"#, "$.conditions[0].when.platform[0]", "\"iphone\" is not a platform"),
        (#"{"colour":["red"]}"#, "$.conditions[0].when.colour", "is not a kind of condition"),
        (#"{"platform":["ios"],"country":["JP"]}"#, "$.conditions[0].when", "exactly one of"),
        (#"{"percent":{"seed":"s","to":100.001}}"#, "$.conditions[0].when.percent.to", "at most two decimals"),
        (#"{"percent":{"seed":"s","from":50,"to":10}}"#, "$.conditions[0].when.percent", "\"from\" must not be above"),
        (#"{"percent":{"to":10}}"#, "$.conditions[0].when.percent.seed", "is required"),
        (#"{"attribute":{"name":"a","number":{">":"1"}}}"#, "$.conditions[0].when.attribute.number[\">\"]", "must be a number"),
        (#"{"attribute":{"name":"a","bool":{"<":true}}}"#, "$.conditions[0].when.attribute.bool", "takes one comparison"),
        (#"{"attribute":{"name":"a"}}"#, "$.conditions[0].when.attribute", "exactly one test"),
        (#"{"dateTime":{"from":"2026-12-01T09:00"}}"#, "$.conditions[0].when.dateTime.from", "has no offset"),
        (#"{"dateTime":{"from":"2026-02-30T09:00Z"}}"#, "$.conditions[0].when.dateTime.from", "is not a date and time"),
        (#"{"dateTime":{"from":"2026-12-02T00:00Z","until":"2026-12-01T00:00Z"}}"#, "$.conditions[0].when.dateTime.until", "must be after"),
        (#"{"dateTime":{"from":"2026-12-01T09:00","timeZone":"Mars/Base"}}"#, "$.conditions[0].when.dateTime.timeZone", "is not a time zone"),
        (
            #"{"weekly":{"days":["fri","fry"],"from":"22:00","until":"06:00","timeZone":"UTC"}}"#, "$.conditions[0].when.weekly.days[1]",
            "is not a weekday"
        ),
        (#"{"weekly":{"days":["fri"],"from":"25:00","until":"06:00","timeZone":"UTC"}}"#, "$.conditions[0].when.weekly.from", "not a time of day"),
        (#"{"weekly":{"days":["fri"],"from":"22:00","until":"06:00"}}"#, "$.conditions[0].when.weekly.timeZone", "is required"),
        (#""ios""#, "$.conditions[0].when", "must be an object"),
    ]

    @Test(arguments: invalid)
    func rejectsWithThePathOfTheBadNode(_ text: String, _ path: String, _ fragment: String) throws {
        #expect {
            _ = try Self.condition(text)
        } throws: { error in
            guard let error = error as? KizunaError, error.code == .validationFailed else { return false }
            return error.details.contains { $0.field == path && $0.message.contains(fragment) }
        }
    }

    @Test func deepNestingIsBoundedAndAnyDepthBelowItWorks() throws {
        var text = #"{"platform":["ios"]}"#
        for _ in 0..<30 { text = #"{"not":{"not":\#(text)}}"# }
        #expect(try Self.condition(text).evaluate(Self.context()))
        for _ in 0..<30 { text = #"{"all":[\#(text)]}"# }
        #expect(throws: KizunaError.self) { try Self.condition(text) }
    }

    @Test func badDeviceVersionsAreNamed() {
        #expect {
            try EvaluationContext(device: DeviceContext(appVersion: "3.x", buildNumber: "12b", osVersion: "seventeen"))
        } throws: { error in
            let fields = (error as? KizunaError)?.details.compactMap(\.field) ?? []
            return fields == ["$.appVersion", "$.buildNumber", "$.osVersion"]
        }
    }
}
