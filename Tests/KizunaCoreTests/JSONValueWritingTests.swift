import Foundation
import KizunaCore
import Testing

/// `JSONValue.jsonBytes` writes exactly what the canonical encoder writes, without its `Codable` walk.
@Suite("JSON writing")
struct JSONValueWritingTests {
    static let values: [JSONValue] = [
        .null, true, false, 0, -1, 42, 1.5, -0.25, 1e-7, 123_456_789_012, 9_007_199_254_740_992, 1e21, 3.141592653589793,
        "", "plain", "quote \" and backslash \\", "slash / stays", "new\nline\ttab\r\u{8}\u{c}", "control \u{1} \u{1f}", "é ü 日本 🎉",
        [], [1, "two", nil, [false]], [:], ["b": 1, "a": ["z": "last", "y": nil], "_deleted": false, "Z": "upper first"],
        ["empty": [], "nested": [[:], [[]]]],
    ]

    @Test(arguments: values)
    func writesWhatTheCanonicalEncoderWrites(_ value: JSONValue) throws {
        let encoded = try WireFormat.canonicalEncoder().encode(value)
        #expect(String(decoding: value.jsonBytes, as: UTF8.self) == String(decoding: encoded, as: UTF8.self))
    }

    @Test(arguments: values)
    func writesForPeopleWhatThePrettyEncoderWrites(_ value: JSONValue) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        let encoded = try encoder.encode(value)
        #expect(String(decoding: value.prettyJSONBytes, as: UTF8.self) == String(decoding: encoded, as: UTF8.self))
    }

    @Test func numbersJSONCannotHoldAreNull() {
        #expect(JSONValue.number(.nan).jsonBytes == Array("null".utf8))
        #expect(JSONValue.number(.infinity).jsonBytes == Array("null".utf8))
    }
}
