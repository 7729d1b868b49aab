import Foundation

/// Runs `git` in a project directory, for the build number from the commit count and the release branch.
enum Git {
    /// Standard output of `git arguments…` run in `directory`, trimmed.
    ///
    /// - Throws: `VersionBumpError` (`git_failed`) with git's own message when it exits with an error.
    static func run(_ arguments: [String], in directory: URL) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git"] + arguments
        process.currentDirectoryURL = directory
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw VersionBumpError(code: "git_failed", message: "Cannot run git: \(error.localizedDescription)")
        }
        // Read before waiting, so a full pipe cannot stall git.
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let said = message.trimmingCharacters(in: .whitespacesAndNewlines)
            throw VersionBumpError(code: "git_failed", message: "git \(arguments.joined(separator: " ")) failed in \(directory.path): \(said)")
        }
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Whether the repository in `directory` has a local branch `name`.
    static func hasBranch(_ name: String, in directory: URL) throws -> Bool {
        let found = try run(["branch", "--list", name], in: directory)
        return !found.isEmpty
    }
}
