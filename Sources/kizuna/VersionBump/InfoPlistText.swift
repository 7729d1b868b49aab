import Foundation

/// Finds and replaces `CFBundleShortVersionString` and `CFBundleVersion` in an `Info.plist`.
///
/// An XML plist is edited as text: the `<string>` after `<key>CFBundleVersion</key>` is the only thing
/// replaced, so the file keeps its formatting byte for byte. A binary plist (`bplist00`) cannot be edited in
/// place: it is decoded and encoded again with `PropertyListSerialization`, which keeps every value but not
/// necessarily the same bytes.
enum InfoPlistText {
    /// Whether `bytes` is a binary property list.
    static func isBinary(_ bytes: [UInt8]) -> Bool { bytes.starts(with: Array("bplist00".utf8)) }

    /// The version values of an XML plist, with their byte ranges.
    static func xmlSites(in bytes: [UInt8], path: String) -> [VersionSite] {
        var sites: [VersionSite] = []
        for field in VersionField.allCases {
            let key = Array("<key>\(field.plistKey)</key>".utf8)
            var searchStart = 0
            while let keyRange = bytes[searchStart...].firstRange(of: key) {
                searchStart = keyRange.upperBound
                var index = keyRange.upperBound
                while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
                guard bytes[index...].starts(with: openString) else { continue }
                let start = index + openString.count
                guard let close = bytes[start...].firstRange(of: closeString) else { continue }
                let line = bytes[..<start].reduce(1) { $1 == 0x0A ? $0 + 1 : $0 }
                let value = String(decoding: bytes[start..<close.lowerBound], as: UTF8.self)
                sites.append(
                    VersionSite(
                        path: path, format: .plist, field: field, key: field.plistKey, value: value, line: line, range: start..<close.lowerBound)
                )
            }
        }
        return sites.sorted { ($0.range?.lowerBound ?? 0) < ($1.range?.lowerBound ?? 0) }
    }

    /// The version values of a binary plist's top-level dictionary.
    ///
    /// - Throws: `VersionBumpError` (`bad_plist`) when the file is not a dictionary plist.
    static func binarySites(in data: Data, path: String) throws -> [VersionSite] {
        let dictionary = try decode(data, path: path)
        return VersionField.allCases.compactMap { field in
            guard let value = dictionary[field.plistKey] as? String else { return nil }
            return VersionSite(path: path, format: .binaryPlist, field: field, key: field.plistKey, value: value)
        }
    }

    /// The binary plist with the given values set, encoded as a binary plist again.
    static func rewriteBinary(_ data: Data, values: [VersionField: String], path: String) throws -> Data {
        var dictionary = try decode(data, path: path)
        for (field, value) in values { dictionary[field.plistKey] = value }
        return try PropertyListSerialization.data(fromPropertyList: dictionary, format: .binary, options: 0)
    }

    private static func decode(_ data: Data, path: String) throws -> [String: Any] {
        let plist = try? PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        guard let dictionary = plist as? [String: Any] else {
            throw VersionBumpError(code: "bad_plist", message: "\(path) is not a property list holding a dictionary.")
        }
        return dictionary
    }

    private static let openString = Array("<string>".utf8)
    private static let closeString = Array("</string>".utf8)
}
