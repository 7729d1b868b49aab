/// The SDL as text: where an offset is in lines and columns, and whether its nesting is too deep to parse.
///
/// GraphQL's parser reports UTF-8 offsets; its own `getLocation` counts lines with UTF-16 ranges against them, which
/// drifts after the first non-ASCII character (a Japanese description, say). Counting here keeps the units apart and
/// gives columns in characters, as an editor shows them.
struct SDLText: Sendable {
    /// The deepest nesting of `[`, `{` and `(` accepted. The parser recurses once a level, so a hostile document of
    /// nested lists could exhaust the stack; a real schema nests four or five deep.
    static let maximumNesting = 32

    private let bytes: [UInt8]
    /// The UTF-8 offset at which each line begins; the first is 0.
    private let lineStarts: [Int]

    init(_ text: String) {
        bytes = Array(text.utf8)
        var starts = [0]
        var index = 0
        // GraphQL ends lines with \n, \r\n or a lone \r.
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: "\r") {
                if index < bytes.count, bytes[index] == UInt8(ascii: "\n") { index += 1 }
                starts.append(index)
            } else if byte == UInt8(ascii: "\n") {
                starts.append(index)
            }
        }
        lineStarts = starts
    }

    /// The 1-based line and column of the UTF-8 `offset`, the column counted in characters.
    func position(of offset: Int) -> (line: Int, column: Int) {
        let offset = min(max(offset, 0), bytes.count)
        // The last line that starts at or before the offset.
        var low = 0
        var high = lineStarts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if lineStarts[middle] <= offset { low = middle } else { high = middle - 1 }
        }
        let characters = String(decoding: bytes[lineStarts[low]..<offset], as: UTF8.self).count
        return (low + 1, characters + 1)
    }

    /// Whether the text holds no definitions at all: only white space, commas and comments, which GraphQL ignores.
    var isBlank: Bool {
        var inComment = false
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "\n"), UInt8(ascii: "\r"): inComment = false
            case _ where inComment: continue
            case UInt8(ascii: "#"): inComment = true
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: ","): continue
            default: return false
            }
        }
        return true
    }

    /// The UTF-8 offset of the first bracket nested deeper than `limit`, outside strings and comments, or `nil`.
    func offsetNestedDeeper(than limit: Int) -> Int? {
        var depth = 0
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "#"):
                while index < bytes.count, bytes[index] != UInt8(ascii: "\n"), bytes[index] != UInt8(ascii: "\r") { index += 1 }
                continue
            case UInt8(ascii: "\""):
                index = endOfString(at: index)
                continue
            case UInt8(ascii: "["), UInt8(ascii: "{"), UInt8(ascii: "("):
                depth += 1
                if depth > limit { return index }
            case UInt8(ascii: "]"), UInt8(ascii: "}"), UInt8(ascii: ")"):
                depth = max(depth - 1, 0)
            default:
                break
            }
            index += 1
        }
        return nil
    }

    /// The offset just after the string or block string that opens at `start` (or the end of the text).
    private func endOfString(at start: Int) -> Int {
        let quote = UInt8(ascii: "\"")
        let isBlock = start + 2 < bytes.count && bytes[start + 1] == quote && bytes[start + 2] == quote
        var index = start + (isBlock ? 3 : 1)
        while index < bytes.count {
            if isBlock {
                // A block string ends at """ and escapes only \""".
                if bytes[index] == UInt8(ascii: "\\"), index + 3 < bytes.count, bytes[index + 1...index + 3].allSatisfy({ $0 == quote }) {
                    index += 4
                    continue
                }
                if index + 2 < bytes.count, bytes[index...index + 2].allSatisfy({ $0 == quote }) { return index + 3 }
            } else {
                if bytes[index] == UInt8(ascii: "\\") {
                    index += 2
                    continue
                }
                // A plain string cannot span lines; the parser reports the unterminated one.
                if bytes[index] == quote || bytes[index] == UInt8(ascii: "\n") { return index + 1 }
            }
            index += 1
        }
        return bytes.count
    }
}
