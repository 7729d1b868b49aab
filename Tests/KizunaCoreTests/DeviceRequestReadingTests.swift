import Foundation
import KizunaCore
import Testing

/// `DeviceRequest(plainJSON:)` is a shortcut past `JSONDecoder` for the bodies devices send: whatever it reads must be
/// exactly what `JSONDecoder` reads, and whatever it declines goes to `JSONDecoder` unchanged.
@Suite("Device bodies read without JSONDecoder")
struct DeviceRequestReadingTests {
    static func plain(_ body: String) -> DeviceRequest? {
        Array(body.utf8).withUnsafeBytes { DeviceRequest(plainJSON: $0) }
    }

    static func decoded(_ body: String) -> DeviceRequest? {
        try? WireFormat.decoder().decode(DeviceRequest.self, from: Data(body.utf8))
    }

    @Test("the SDK's bodies are read, and read as JSONDecoder reads them")
    func theSDKsBodiesAreReadAsJSONDecoderReadsThem() throws {
        let requests = [
            DeviceRequest(device: DeviceContext(appVersion: "3.9.2")),
            DeviceRequest(
                device: DeviceContext(
                    appVersion: "3.10.0", buildNumber: "451", platform: .ios, osVersion: "17.5.1", locale: "ja-JP", country: "JP",
                    installId: "5F0C8D2E-7A41-4C35-9E0B-2B1F3C4D5E6F",
                    attributes: ["plan": .string("プロ"), "visits": .number(12), "ratio": .number(-0.25e-3), "beta": .bool(true)]),
                knownVersion: 42),
            DeviceRequest(device: DeviceContext(appVersion: "1.0", platform: .android, attributes: [:]), knownVersion: 0),
        ]
        for request in requests {
            for encoder in [WireFormat.encoder(), WireFormat.canonicalEncoder(), JSONEncoder()] {
                let body = String(decoding: try encoder.encode(request), as: UTF8.self)
                let plain = try #require(Self.plain(body), "declined \(body)")
                #expect(plain == request)
                #expect(plain == Self.decoded(body))
            }
        }
    }

    static let bodies: [String] = [
        // Read: whitespace, nulls for optional fields, every attribute form, whole and fractional numbers.
        #" { "appVersion" : "2.0" , "buildNumber" : null , "attributes" : { } } "#,
        "{\n\t\"appVersion\":\"2.0\",\r\n\"platform\":null,\"knownVersion\":null}",
        #"{"appVersion":"2.0","attributes":{"a":1,"b":1.5,"c":-0,"d":1E3,"e":2e-2,"f":false,"g":"","h":"x y"}}"#,
        #"{"appVersion":"2.0","knownVersion":-9223372036854775808}"#,
        #"{"appVersion":"2.0","knownVersion":9223372036854775807}"#,
        #"{"appVersion":"","locale":"ja_JP","country":"jp","osVersion":"18"}"#,
        #"{"installId":"é","appVersion":"1"}"#,
        // Declined: JSONDecoder refuses these or reads them another way; either way it decides.
        #"{"appVersion":"2.0","knownVersion":9223372036854775808}"#,
        #"{"appVersion":"2.0","knownVersion":1.0}"#,
        #"{"appVersion":"2.0","knownVersion":1e2}"#,
        #"{"appVersion":"2.0","knownVersion":01}"#,
        #"{"appVersion":"2.0","knownVersion":"1"}"#,
        #"{"appVersion":"2.0","platform":"iOS"}"#,
        #"{"appVersion":"2.0","platform":"ios","platform":"android"}"#,
        #"{"appVersion":"2.0","attributes":{"a":1,"a":2}}"#,
        #"{"appVersion":"2.0","attributes":{"a":null}}"#,
        #"{"appVersion":"2.0","attributes":{"a":[1]}}"#,
        #"{"appVersion":"2.0","attributes":{"a":1e999}}"#,
        #"{"appVersion":"2.0","attributes":{"a":.5}}"#,
        #"{"appVersion":"2.0","attributes":[]}"#,
        #"{"appVersion":"2\"0"}"#,
        #"{"appVersion":"2\u0030"}"#,
        #"{"appVersion":null}"#,
        #"{"appVersion":2}"#,
        #"{"buildNumber":"1"}"#,
        #"{"appVersion":"2.0","extra":{"nested":[1,2]}}"#,
        #"{"appVersion":"2.0",}"#,
        #"{"appVersion":"2.0"} x"#,
        #"{"appVersion":"2.0""#,
        #"["appVersion"]"#,
        "{\"appVersion\":\"a\u{01}b\"}",
        "",
        "nul",
    ]

    @Test("what is read matches JSONDecoder; what is declined is left to it", arguments: bodies)
    func whatIsReadMatchesJSONDecoder(body: String) {
        guard let plain = Self.plain(body) else { return }
        #expect(plain == Self.decoded(body), "read differently: \(body)")
    }

    @Test("the plain forms are read and the others declined")
    func thePlainFormsAreReadAndTheOthersDeclined() {
        let read = Self.bodies.prefix(7).filter { Self.plain($0) == nil }
        #expect(read.isEmpty, "declined plain bodies: \(read)")
        let declined = Self.bodies.dropFirst(7).filter { Self.plain($0) != nil }
        #expect(declined.isEmpty, "read bodies it should leave to JSONDecoder: \(declined)")
    }

    @Test("bytes that are not UTF-8 are declined")
    func bytesThatAreNotUTF8AreDeclined() {
        let body: [UInt8] = Array(#"{"appVersion":""#.utf8) + [0xC3, 0x28] + Array(#""}"#.utf8)
        #expect(body.withUnsafeBytes { DeviceRequest(plainJSON: $0) } == nil)
    }
}
