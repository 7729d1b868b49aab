import Foundation
import KizunaCore
import Testing

/// The byte-level JSON reader against `JSONDecoder`: the same value for every text `JSONDecoder` reads (a fixed set,
/// then thousands generated), a refusal naming its byte for every text it refuses.
@Suite("JSON reading")
struct JSONValueParsingTests {
    static let texts = [
        "null", "true", "false", "0", "-0", "-1", "42", "1.5", "-0.25", "1e-7", "1E+3", "2.5e2", "123456789012345",
        "1234567890123456789", "9007199254740993", "1e308", "0.1", "\"\"", "\"plain\"", #""quote \" and backslash \\""#,
        #""slash \/ and /""#, #""\b\f\n\r\t""#, #""\u00e9 \u65E5\u672c \ud83c\udf89""#, "\"é ü 日本 🎉\"", " [ ] ", "[1,\"two\",null,[false]]",
        "{}", #"{"b":1,"a":{"z":"last","y":null},"_deleted":false}"#, " \n\t{ \"spaced\" : [ 1 , 2 ] } \r\n", #"{"a":1,"a":2}"#, "[1,]",
        #"{"a":1, }"#, "[[],{},]",
    ]

    @Test(arguments: texts)
    func readsWhatJSONDecoderReads(_ text: String) throws {
        #expect(try JSONValue(parsing: text) == JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)))
        #expect(try JSONValue(parsing: Data(text.utf8)) == JSONValue(parsing: Array(text.utf8)))
    }

    static let refused: [(String, Int)] = [
        ("", 0), ("   ", 3), ("nul", 0), ("tru", 0), ("01", 0), ("-", 1), ("1.", 2), ("1e", 2), (".5", 0), ("+1", 0), ("1e400", 0),
        ("[1 2]", 3), ("{\"a\" 1}", 5), ("{a:1}", 1), ("[1] x", 4), ("\"open", 5), ("\"tab\there\"", 4),
        (#""\x""#, 2), (#""\u12""#, 3), (#""\ud83c""#, 7), (#""\udf89""#, 7), ("'single'", 0), ("NaN", 0), ("[", 1),
    ]

    @Test(arguments: refused)
    func refusesWhatJSONDecoderRefuses(_ text: String, offset: Int) {
        #expect(throws: (any Error).self, "JSONDecoder refuses it too") { try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8)) }
        let error = #expect(throws: JSONValue.ParseError.self) { try JSONValue(parsing: text) }
        #expect(error?.offset == offset, "\(error.map(String.init(describing:)) ?? "")")
    }

    @Test func stringsMustBeUTF8AndNestingIsBounded() throws {
        let invalid: [UInt8] = [UInt8(ascii: "\"")] + [0xC3, 0x28] + [UInt8(ascii: "\"")]
        #expect(throws: JSONValue.ParseError.self) { try JSONValue(parsing: invalid) }
        let deep = String(repeating: "[", count: 513) + String(repeating: "]", count: 513)
        #expect(throws: JSONValue.ParseError.self) { try JSONValue(parsing: deep) }
        let allowed = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        #expect(try JSONValue(parsing: allowed) != .null)
    }

    /// Documents of every kind of value, nested, written by the canonical encoder and by `JSONValue.jsonBytes`, read
    /// back: the reader and `JSONDecoder` agree on every one.
    @Test func generatedDocumentsReadAsJSONDecoderReadsThem() throws {
        var random = SystemRandomNumberGenerator()
        let strings = ["", "a", "日本語", "emoji 🎉", "quote \" backslash \\ slash /", "control \u{1}\n\t", "long " + String(repeating: "x", count: 300)]
        func value(_ depth: Int) -> JSONValue {
            switch Int.random(in: 0..<(depth > 4 ? 4 : 7), using: &random) {
            case 0: return .null
            case 1: return .bool(Bool.random(using: &random))
            case 2: return .number([0, -1, 7, 1.5, -2.25e-5, 1e21, 123_456_789_012_345_680, .pi].randomElement(using: &random)!)
            case 3: return .string(strings.randomElement(using: &random)!)
            case 4, 5:
                return .object(Dictionary(uniqueKeysWithValues: (0..<Int.random(in: 0...5, using: &random)).map { ("k\($0)", value(depth + 1)) }))
            default: return .array((0..<Int.random(in: 0...5, using: &random)).map { _ in value(depth + 1) })
            }
        }
        for _ in 0..<2_000 {
            let document = value(0)
            for bytes in [Array(try WireFormat.canonicalEncoder().encode(document)), document.jsonBytes] {
                let decoded = try JSONDecoder().decode(JSONValue.self, from: Data(bytes))
                #expect(try JSONValue(parsing: bytes) == decoded)
                #expect(decoded == document)
            }
        }
    }
}
