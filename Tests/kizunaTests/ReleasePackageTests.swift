import ArgumentParser
import Crypto
import Foundation
import KizunaCore
import Testing

@testable import kizuna

#if canImport(FoundationXML)
    import FoundationXML
#endif

/// `kizuna release package`: the transporter's `.itmsp` directory for an ipa.
@Suite("kizuna release package")
struct ReleasePackageTests {
    /// Reads `<file_name>`, `<checksum type="md5">`, `<size>` and the `apple_id` attribute back with a real XML parser.
    final class Fields: NSObject, XMLParserDelegate {
        var values: [String: String] = [:]
        var text = ""
        func parser(_ parser: XMLParser, didStartElement element: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String])
        {
            text = ""
            if element == "software_assets" { values["apple_id"] = attributes["apple_id"] }
            if element == "package" { values["version"] = attributes["version"] }
            if element == "checksum" { values["checksum_type"] = attributes["type"] }
        }
        func parser(_ parser: XMLParser, foundCharacters string: String) { text += string }
        func parser(_ parser: XMLParser, didEndElement element: String, namespaceURI: String?, qualifiedName: String?) {
            if ["file_name", "checksum", "size"].contains(element) { values[element] = text }
        }
    }

    @Test func writesTheIpaAndItsMetadata() async throws {
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("kizuna-itmsp-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: work) }
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let ipa = work.appendingPathComponent("Shop & Co.ipa")
        let bytes = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try bytes.write(to: ipa)

        var command = try #require(
            try Kizuna.parseAsRoot(["release", "package", "--ipa", ipa.path, "--apple-id", "1234567890", "-o", work.path])
                as? any AsyncParsableCommand)
        try await command.run()

        let package = work.appendingPathComponent("Shop & Co.itmsp")
        #expect(try FileManager.default.contentsOfDirectory(atPath: package.path).sorted() == ["Shop & Co.ipa", "metadata.xml"])
        #expect(try Data(contentsOf: package.appendingPathComponent("Shop & Co.ipa")) == bytes)
        let parser = try #require(XMLParser(contentsOf: package.appendingPathComponent("metadata.xml")))
        let fields = Fields()
        parser.delegate = fields
        #expect(parser.parse(), "metadata.xml is well-formed")
        #expect(fields.values["version"] == "software4.7" && fields.values["apple_id"] == "1234567890")
        #expect(fields.values["file_name"] == "Shop & Co.ipa" && fields.values["checksum_type"] == "md5")
        #expect(fields.values["checksum"] == hex(Insecure.MD5.hash(data: bytes)))
        #expect(fields.values["size"] == "300000")

        let refused = #expect(throws: (any Error).self) { try Kizuna.parseAsRoot(["release", "package", "--ipa", ipa.path, "--apple-id", "id1"]) }
        #expect(refused.map { Kizuna.message(for: $0).contains("--apple-id") } == true, "\(refused.map { Kizuna.message(for: $0) } ?? "")")
    }
}
