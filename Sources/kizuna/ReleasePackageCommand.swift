import ArgumentParser
import Foundation
import KizunaCore

extension ReleaseCommand {
    /// `kizuna release package`: the directory the store's command-line transporter uploads.
    struct Package: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the store upload package (App.itmsp) for an .ipa.",
            discussion: """
                Writes DIR/<Name>.itmsp/ holding a copy of the ipa and metadata.xml in the transporter's format \
                (package version software4.7): the app's Apple ID and the ipa's file name, MD5 and size in bytes. \
                The MD5 is computed reading the ipa a chunk at a time.
                """)

        @Option(name: .customLong("ipa"), help: "The .ipa to package.") var ipa: String
        @Option(name: .customLong("apple-id"), help: "The app's Apple ID in App Store Connect (digits).") var appleId: String
        @Option(name: .shortAndLong, help: "The directory to write <Name>.itmsp in (default: here).") var output: String = "."

        func validate() throws {
            guard !appleId.isEmpty, appleId.allSatisfy(\.isASCIIDigit) else { throw ValidationError("--apple-id must be digits, got '\(appleId)'.") }
            guard ipa.lowercased().hasSuffix(".ipa") else { throw ValidationError("--ipa must name an .ipa file, got '\(ipa)'.") }
        }

        func run() async throws {
            let source = URL(fileURLWithPath: ipa)
            let digest = try FileDigest.of(source)
            let package = URL(fileURLWithPath: output).appendingPathComponent(source.deletingPathExtension().lastPathComponent + ".itmsp")
            try? FileManager.default.removeItem(at: package)
            try FileManager.default.createDirectory(at: package, withIntermediateDirectories: true)
            try FileManager.default.copyItem(at: source, to: package.appendingPathComponent(source.lastPathComponent))
            let metadata = Self.metadata(appleId: appleId, fileName: source.lastPathComponent, md5: digest.md5, size: digest.size)
            try Data(metadata.utf8).write(to: package.appendingPathComponent("metadata.xml"), options: .atomic)
            print("Wrote \(package.path) (\(source.lastPathComponent), \(digest.size) bytes, md5 \(digest.md5)).")
        }

        /// `metadata.xml`: `package` → `software_assets apple_id` → `asset type="bundle"` → `data_file` with the
        /// file's name, MD5 and size.
        static func metadata(appleId: String, fileName: String, md5: String, size: Int64) -> String {
            """
            <?xml version="1.0" encoding="UTF-8"?>
            <package version="software4.7" xmlns="http://apple.com/itunes/importer">
                <software_assets apple_id="\(appleId.xmlEscaped)">
                    <asset type="bundle">
                        <data_file>
                            <file_name>\(fileName.xmlEscaped)</file_name>
                            <checksum type="md5">\(md5)</checksum>
                            <size>\(size)</size>
                        </data_file>
                    </asset>
                </software_assets>
            </package>

            """
        }
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
