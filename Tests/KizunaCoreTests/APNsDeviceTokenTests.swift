import KizunaCore
import Testing

/// Device token text as apps send it: hex of every byte (any case), the pre-iOS 13 `<…>` description normalized, the
/// iOS 13 `{length = …}` description refused as truncated, with how to build the string; lengths not fixed at 32 bytes.
@Suite("APNs device tokens")
struct APNsDeviceTokenTests {
    static let hex = "70a7ff15c1233c44a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718"

    @Test func theFormsThatHoldTheWholeTokenAreTakenAndNormalized() throws {
        #expect(try APNsDeviceToken(parsing: Self.hex).hex == Self.hex)
        #expect(try APNsDeviceToken(parsing: Self.hex.uppercased()).hex == Self.hex)
        #expect(try APNsDeviceToken(parsing: "  \(Self.hex)\n").hex == Self.hex)
        let legacy = "<70a7ff15 c1233c44 a1b2c3d4 e5f60718 293a4b5c 6d7e8f90 a1b2c3d4 e5f60718>"
        #expect(try APNsDeviceToken(parsing: legacy).hex == Self.hex)
        #expect(try APNsDeviceToken(bytes: [0x70, 0xa7] + Array(repeating: 0x0f, count: 30)).hex == "70a7" + String(repeating: "0f", count: 30))
        // Longer tokens than 32 bytes are tokens too.
        #expect(try APNsDeviceToken(parsing: String(repeating: "ab", count: 100)).hex.count == 200)
    }

    @Test(arguments: [
        ("{length = 32, bytes = 0x70a7ff15 c1233c44 ... e5f60718 293a4b5c }", "only some of its bytes"),
        ("70a7ff15c1233c44a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6071", "odd number"),
        ("70a7ff15-c1233c44a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f6071", "character 9 is '-'"),
        ("70a7ff15", "16 to 100 bytes; this one is 4"),
        (String(repeating: "ab", count: 101), "this one is 101"),
        ("", "this one is 0"),
    ])
    func aTokenThatCannotBeDeliveredToIsRefusedSayingWhy(_ text: String, _ reason: String) {
        #expect {
            try APNsDeviceToken(parsing: text)
        } throws: { error in
            guard let error = error as? KizunaError else { return false }
            return error.code == .validationFailed && error.field == "token" && error.message.contains(reason)
        }
    }

    @Test func theTruncatedFormSaysHowToBuildTheString() {
        let error = #expect(throws: KizunaError.self) { try APNsDeviceToken(parsing: "{length = 32, bytes = 0x70a7ff15 ... 293a4b5c }") }
        #expect(error?.message.contains(#"String(format: "%02x", $0)"#) == true)
    }
}
