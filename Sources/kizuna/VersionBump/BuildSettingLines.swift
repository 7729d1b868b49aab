/// Finds `MARKETING_VERSION = 1.2.3;` and `CURRENT_PROJECT_VERSION = 45;` in a `project.pbxproj`, and
/// `MARKETING_VERSION = 1.2.3` in an `.xcconfig`, as byte ranges of the values.
///
/// It works on bytes, line by line, so a write replaces the value and nothing else: indentation, quotes,
/// comments and line endings (`\n` or `\r\n`) stay as they were.
enum BuildSettingLines {
    /// Every build-setting line that sets a version value, in file order.
    static func sites(in bytes: [UInt8], format: VersionFileFormat, path: String) -> [VersionSite] {
        var sites: [VersionSite] = []
        var lineStart = 0
        var lineNumber = 1
        while lineStart < bytes.count {
            var lineEnd = bytes[lineStart...].firstIndex(of: newline) ?? bytes.count
            let next = lineEnd + 1
            if lineEnd > lineStart, bytes[lineEnd - 1] == carriageReturn { lineEnd -= 1 }
            for field in VersionField.allCases {
                if let (key, range) = match(bytes, lineStart..<lineEnd, setting: field.buildSetting, format: format) {
                    let value = String(decoding: bytes[range], as: UTF8.self)
                    sites.append(VersionSite(path: path, format: format, field: field, key: key, value: value, line: lineNumber, range: range))
                }
            }
            lineStart = next
            lineNumber += 1
        }
        return sites
    }

    /// The key as written and the value's byte range, when the line sets `setting`.
    private static func match(_ bytes: [UInt8], _ line: Range<Int>, setting: String, format: VersionFileFormat) -> (String, Range<Int>)? {
        var index = skipBlanks(bytes, from: line.lowerBound, to: line.upperBound)
        let keyStart = index
        let name = Array(setting.utf8)
        guard bytes[index..<line.upperBound].starts(with: name) else { return nil }
        index += name.count
        // An xcconfig may condition a setting: MARKETING_VERSION[config=Debug][sdk=iphoneos*] = 1.0
        while format == .xcconfig, index < line.upperBound, bytes[index] == openBracket {
            guard let close = bytes[index..<line.upperBound].firstIndex(of: closeBracket) else { return nil }
            index = close + 1
        }
        let key = String(decoding: bytes[keyStart..<index], as: UTF8.self)
        index = skipBlanks(bytes, from: index, to: line.upperBound)
        guard index < line.upperBound, bytes[index] == equals else { return nil }
        index = skipBlanks(bytes, from: index + 1, to: line.upperBound)
        guard index < line.upperBound else { return nil }
        if bytes[index] == quote {
            guard let close = bytes[(index + 1)..<line.upperBound].firstIndex(of: quote), close > index + 1 else { return nil }
            return (key, (index + 1)..<close)
        }
        var end = line.upperBound
        if format == .pbxproj {
            guard let semicolon = bytes[index..<line.upperBound].firstIndex(of: semicolon) else { return nil }
            end = semicolon
        } else if let comment = bytes[index..<line.upperBound].firstRange(of: [slash, slash]) {
            end = comment.lowerBound
        }
        while end > index, [space, tab, semicolon].contains(bytes[end - 1]) { end -= 1 }
        return end > index ? (key, index..<end) : nil
    }

    private static func skipBlanks(_ bytes: [UInt8], from start: Int, to end: Int) -> Int {
        var index = start
        while index < end, bytes[index] == space || bytes[index] == tab { index += 1 }
        return index
    }

    private static let newline = UInt8(ascii: "\n")
    private static let carriageReturn = UInt8(ascii: "\r")
    private static let space = UInt8(ascii: " ")
    private static let tab = UInt8(ascii: "\t")
    private static let equals = UInt8(ascii: "=")
    private static let quote = UInt8(ascii: "\"")
    private static let semicolon = UInt8(ascii: ";")
    private static let slash = UInt8(ascii: "/")
    private static let openBracket = UInt8(ascii: "[")
    private static let closeBracket = UInt8(ascii: "]")
}

/// Replaces byte ranges of a file with new values, leaving every other byte as it was.
enum ByteEdits {
    /// `bytes` with each range replaced by its text; the ranges must not overlap.
    static func apply(_ edits: [(range: Range<Int>, text: String)], to bytes: [UInt8]) -> [UInt8] {
        var result = bytes
        for edit in edits.sorted(by: { $0.range.lowerBound > $1.range.lowerBound }) {
            result.replaceSubrange(edit.range, with: Array(edit.text.utf8))
        }
        return result
    }
}
