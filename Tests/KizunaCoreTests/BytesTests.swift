import Testing

@testable import KizunaCore

/// Hex both ways: what `hex` writes reads back, and only hex reads at all.
@Suite("Bytes")
struct BytesTests {
    @Test func hexReadsBackAndRefusesAnythingElse() {
        let bytes: [UInt8] = [0x00, 0x0a, 0x7f, 0xff]
        #expect(hexDecoded(hex(bytes)) == bytes)
        #expect(hexDecoded("0AfF") == [0x0a, 0xff])
        for bad in ["abc", "+f", " f", "0g", "zz"] { #expect(hexDecoded(bad) == nil, "\(bad)") }
        #expect(hexDecoded("") == [])
    }
}
