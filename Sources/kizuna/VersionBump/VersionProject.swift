import Foundation

/// The files of an Xcode project that hold its marketing version and build number, and the values in them.
struct VersionProject: Sendable {
    /// Folders never searched: build output and other people's code.
    static let skippedFolders: Set<String> = ["build", ".build", "DerivedData", "Pods", "Carthage", ".git", "node_modules", "SourcePackages"]

    /// The project directory.
    let root: URL
    /// Every place a value was found, literal or reference, by file then position.
    let sites: [VersionSite]

    /// Reads every `*.xcodeproj/project.pbxproj`, `*Info.plist` and `*.xcconfig` under `root`.
    static func discover(at root: URL) throws -> VersionProject {
        let root = root.standardizedFileURL
        var sites: [VersionSite] = []
        for path in try candidateFiles(under: root) {
            let data = try Data(contentsOf: root.appendingPathComponent(path))
            let bytes = [UInt8](data)
            if path.hasSuffix(".pbxproj") {
                sites += BuildSettingLines.sites(in: bytes, format: .pbxproj, path: path)
            } else if path.hasSuffix(".xcconfig") {
                sites += BuildSettingLines.sites(in: bytes, format: .xcconfig, path: path)
            } else if InfoPlistText.isBinary(bytes) {
                sites += try InfoPlistText.binarySites(in: data, path: path)
            } else {
                sites += InfoPlistText.xmlSites(in: bytes, path: path)
            }
        }
        return VersionProject(root: root, sites: sites)
    }

    /// Relative paths of the files that may hold a version, sorted.
    private static func candidateFiles(under root: URL) throws -> [String] {
        guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isDirectoryKey]) else {
            throw VersionBumpError(code: "no_project", message: "Cannot read the directory \(root.path).")
        }
        var paths: [String] = []
        let prefix = root.path.hasSuffix("/") ? root.path : root.path + "/"
        while let url = walker.nextObject() as? URL {
            let name = url.lastPathComponent
            if (try? url.resourceValues(forKeys: [.isDirectoryKey]).isDirectory) == true {
                if skippedFolders.contains(name) { walker.skipDescendants() }
                continue
            }
            let isProject = name == "project.pbxproj" && url.deletingLastPathComponent().pathExtension == "xcodeproj"
            guard isProject || name.hasSuffix("Info.plist") || name.hasSuffix(".xcconfig") else { continue }
            let path = url.standardizedFileURL.path
            paths.append(path.hasPrefix(prefix) ? String(path.dropFirst(prefix.count)) : path)
        }
        return paths.sorted()
    }

    /// The sites of `field` with a literal value: the ones a bump writes.
    func literals(_ field: VersionField) -> [VersionSite] { sites.filter { $0.field == field && !$0.isReference } }

    /// The one value the project holds for `field`.
    ///
    /// - Parameter force: take the highest value when the places disagree instead of refusing.
    /// - Throws: `VersionBumpError` `no_value` when no place holds a literal value, `mismatch` naming every place
    ///   when they disagree, `bad_value` when the value is not a version or build number.
    func current(_ field: VersionField, force: Bool = false) throws -> String {
        let literals = literals(field)
        let names = "\(field.buildSetting) or \(field.plistKey)"
        guard !literals.isEmpty else {
            throw VersionBumpError(code: "no_value", message: "No literal \(names) was found under \(root.path).")
        }
        let values = Set(literals.map(\.value))
        if values.count == 1 || !force {
            guard values.count == 1 else {
                let places = literals.map { "  \($0.location)  \($0.key) = \($0.value)" }.joined(separator: "\n")
                throw VersionBumpError(
                    code: "mismatch",
                    message: "The project holds different values for \(names):\n\(places)\nMake them equal, or pass --force to bump the highest."
                )
            }
            try VersionArithmetic.validate(literals[0].value, field)
            return literals[0].value
        }
        return try VersionArithmetic.highest(Array(values), field)
    }

    /// Writes `values` to every literal site of their fields, leaving every other byte of the text files as it was.
    ///
    /// - Returns: the sites written, with their old values.
    @discardableResult
    func write(_ values: [VersionField: String]) throws -> [VersionSite] {
        let written = sites.filter { !$0.isReference && values[$0.field] != nil }
        for path in Array(Set(written.map(\.path))).sorted() {
            let file = root.appendingPathComponent(path)
            let data = try Data(contentsOf: file)
            let mine = written.filter { $0.path == path }
            let output: Data
            if mine.contains(where: { $0.format == .binaryPlist }) {
                output = try InfoPlistText.rewriteBinary(data, values: values.filter { field, _ in mine.contains { $0.field == field } }, path: path)
            } else {
                let edits = mine.compactMap { site in site.range.map { (range: $0, text: values[site.field]!) } }
                output = Data(ByteEdits.apply(edits, to: [UInt8](data)))
            }
            try output.write(to: file, options: .atomic)
        }
        return written
    }
}
