import Foundation
import Testing

/// Keeps the ```swift blocks of README.md and the DocC articles the same as the snippet files that compile them.
///
/// A snippet is a function whose body is a doc block copied verbatim (indented one level), preceded by a marker
/// line naming the block: `// snippet: <doc path>#<n>`, `n` counting the doc's ```swift blocks from 1. A block's
/// `import` lines go at the top of its snippet file instead. A block the snippets cannot compile is marked in the
/// doc with `<!-- snippet: skip (reason) -->` on the line before its fence.
@Suite struct SnippetSyncTests {
    @Test func everyDocBlockIsCompiledBySnippet() throws {
        let snippets = try SnippetFile.all()
        for block in try DocBlock.all() where !block.skipped {
            let place = "\(block.doc):\(block.line)"
            let matches: [(file: SnippetFile, snippet: SnippetFile.Snippet)] = snippets.flatMap { file in
                file.snippets.filter { $0.name == block.name }.map { (file: file, snippet: $0) }
            }
            guard let match = matches.first else {
                Issue.record(
                    """
                    \(place): this ```swift block is in no snippet file. Copy the block into a function in \
                    \(SnippetFile.directories.joined(separator: " or ")) preceded by `// snippet: \(block.name)`, \
                    or mark it in the doc with `<!-- snippet: skip (reason) -->`.
                    """)
                continue
            }
            let (file, snippet) = match
            #expect(matches.count == 1, "\(place): `// snippet: \(block.name)` appears \(matches.count) times in the snippet files.")
            let common = min(block.body.count, snippet.body.count)
            let difference = (0..<common).first { block.body[$0] != snippet.body[$0] } ?? common
            #expect(
                block.body == snippet.body,
                """
                \(place): this ```swift block differs from its snippet in \(file.path):\(snippet.line) (first at line \
                \(difference + 1) of the block, without its imports). Copy the block into the snippet file verbatim.
                """)
            for line in block.imports where !file.imports.contains(line) {
                Issue.record("\(place): the block has `\(line)`; put it at the top of \(file.path), where its snippet is.")
            }
        }
    }

    @Test func everySnippetNamesADocBlock() throws {
        let blocks = try DocBlock.all()
        for file in try SnippetFile.all() {
            for snippet in file.snippets {
                let place = "\(file.path):\(snippet.line)"
                guard let block = blocks.first(where: { $0.name == snippet.name }) else {
                    Issue.record("\(place): `// snippet: \(snippet.name)` names no ```swift block; remove the snippet or fix its marker.")
                    continue
                }
                #expect(
                    !block.skipped,
                    "\(place): \(block.doc):\(block.line) is marked `snippet: skip`; remove the snippet or the skip mark.")
            }
            for line in file.malformed {
                Issue.record("\(file.path):\(line): a `// snippet:` marker must be followed by a function whose body ends with `}` at column 0.")
            }
        }
    }
}

/// The package's root directory, found from this file's path.
private let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().path

private func readLines(_ path: String) throws -> [String] {
    let text = try String(contentsOfFile: packageRoot + "/" + path, encoding: .utf8)
    return text.split(separator: "\n", omittingEmptySubsequences: false).map { raw in
        var line = String(raw)
        while line.last?.isWhitespace == true { line.removeLast() }
        return line
    }
}

private func indentation(_ line: String) -> Int { line.prefix { $0 == " " }.count }

/// A ```swift block of a doc.
private struct DocBlock {
    /// The doc's path from the package root.
    var doc: String
    /// The block's place among the doc's ```swift blocks, from 1.
    var ordinal: Int
    /// The line of its opening fence, from 1.
    var line: Int
    /// Its `import` lines.
    var imports: [String]
    /// Its other lines, without blank lines at either end.
    var body: [String]
    /// Whether the doc marks it `<!-- snippet: skip (reason) -->`.
    var skipped: Bool

    /// What its snippet's marker says.
    var name: String { "\(doc)#\(ordinal)" }

    /// The blocks of README.md, of every example's README, and of every DocC catalog's articles.
    static func all() throws -> [DocBlock] {
        var docs = ["README.md"]
        for example in try FileManager.default.contentsOfDirectory(atPath: packageRoot + "/Examples").sorted()
        where FileManager.default.fileExists(atPath: packageRoot + "/Examples/\(example)/README.md") {
            docs.append("Examples/\(example)/README.md")
        }
        for target in try FileManager.default.contentsOfDirectory(atPath: packageRoot + "/Sources").sorted() {
            let catalogs = (try? FileManager.default.contentsOfDirectory(atPath: packageRoot + "/Sources/" + target)) ?? []
            for catalog in catalogs.sorted() where catalog.hasSuffix(".docc") {
                let directory = "Sources/\(target)/\(catalog)"
                let files = try FileManager.default.subpathsOfDirectory(atPath: packageRoot + "/" + directory)
                docs += files.filter { $0.hasSuffix(".md") }.sorted().map { "\(directory)/\($0)" }
            }
        }
        return try docs.flatMap { try blocks(in: $0) }
    }

    static func blocks(in doc: String) throws -> [DocBlock] {
        let lines = try readLines(doc)
        var blocks: [DocBlock] = []
        var index = 0
        while index < lines.count {
            let fence = lines[index]
            let indent = indentation(fence)
            guard fence.dropFirst(indent).hasPrefix("```swift") else {
                index += 1
                continue
            }
            let previous = lines[..<index].last { !$0.trimmingCharacters(in: .whitespaces).isEmpty }
            let skipped = previous?.trimmingCharacters(in: .whitespaces).hasPrefix("<!-- snippet: skip") ?? false
            var content: [String] = []
            var end = index + 1
            while end < lines.count, lines[end].trimmingCharacters(in: .whitespaces) != "```" {
                // A fence indented in a list indents its lines as much.
                content.append(String(lines[end].dropFirst(min(indent, indentation(lines[end])))))
                end += 1
            }
            let imports = content.filter { $0.hasPrefix("import ") }
            var body = content.filter { !$0.hasPrefix("import ") }
            while body.first?.isEmpty == true { body.removeFirst() }
            while body.last?.isEmpty == true { body.removeLast() }
            blocks.append(
                DocBlock(doc: doc, ordinal: blocks.count + 1, line: index + 1, imports: imports, body: body, skipped: skipped))
            index = end + 1
        }
        return blocks
    }
}

/// A file of snippet functions.
private struct SnippetFile {
    /// A function marked `// snippet: <doc>#<n>`.
    struct Snippet {
        /// What the marker says.
        var name: String
        /// The marker's line, from 1.
        var line: Int
        /// The function's body up to `// snippet end` (or all of it), one level of indentation removed.
        var body: [String]
    }

    /// The directories that hold snippet files, from the package root.
    static let directories = ["Tests/KizunaSnippetTests", "Tests/KizunaServerSnippetTests"]
    static let marker = "// snippet: "
    static let end = "// snippet end"

    /// The file's path from the package root.
    var path: String
    /// Its `import` lines.
    var imports: Set<String>
    var snippets: [Snippet]
    /// The lines of markers not followed by a function.
    var malformed: [Int]

    static func all() throws -> [SnippetFile] {
        var files: [SnippetFile] = []
        for directory in directories {
            let names = try FileManager.default.contentsOfDirectory(atPath: packageRoot + "/" + directory)
            for name in names.sorted() where name.hasSuffix(".swift") {
                files.append(try SnippetFile(path: "\(directory)/\(name)"))
            }
        }
        return files
    }

    init(path: String) throws {
        let lines = try readLines(path)
        self.path = path
        imports = Set(lines.filter { $0.hasPrefix("import ") })
        snippets = []
        malformed = []
        for (index, line) in lines.enumerated() where line.hasPrefix(Self.marker) {
            let name = String(line.dropFirst(Self.marker.count)).trimmingCharacters(in: .whitespaces)
            // The signature may wrap; the body runs from the line after the one ending in `{` to the `}` at column 0.
            guard let opening = lines[(index + 1)...].firstIndex(where: { $0.hasSuffix("{") }),
                let closing = lines[(opening + 1)...].firstIndex(of: "}")
            else {
                malformed.append(index + 1)
                continue
            }
            // Lines after `// snippet end` are the test's own (using what the snippet made, so it compiles cleanly).
            let end = lines[(opening + 1)..<closing].firstIndex { $0.trimmingCharacters(in: .whitespaces) == Self.end } ?? closing
            let body = Array(lines[(opening + 1)..<end])
            let indent = body.filter { !$0.isEmpty }.map(indentation).min() ?? 0
            snippets.append(Snippet(name: name, line: index + 1, body: body.map { String($0.dropFirst(indent)) }))
        }
    }
}
