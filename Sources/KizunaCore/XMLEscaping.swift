import Foundation

extension String {
    /// The text escaped for XML element content and attribute values (`&`, `<`, `>`, `"`, `'`): the store upload
    /// package's metadata, S3's multipart manifest, and the Info.plist snippets `kizuna doctor` prints.
    public var xmlEscaped: String {
        replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
            .replacingOccurrences(of: "\"", with: "&quot;").replacingOccurrences(of: "'", with: "&apos;")
    }
}
