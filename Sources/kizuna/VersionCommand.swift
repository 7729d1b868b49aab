import ArgumentParser
import Foundation
import KizunaCore

/// `kizuna version`: Kizuna's own version, or with `show`/`bump` an Xcode project's.
struct VersionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "version",
        abstract: "Print Kizuna's version, or show and bump an Xcode project's version and build number.",
        subcommands: [VersionShowCommand.self, VersionBumpCommand.self]
    )

    @OptionGroup var output: OutputOptions

    func run() throws {
        if output.json { return try output.printJSON(["version": "\(KizunaVersion.current)"]) }
        print(KizunaVersion.current)
    }
}

/// `kizuna version show`: every place the project keeps its version and build number.
struct VersionShowCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print the project's marketing version and build number and every place each is written."
    )

    @Option(help: "The Xcode project's directory.") var project = "."
    @OptionGroup var output: OutputOptions

    struct Report: Encodable {
        var version: String?
        var build: String?
        var sites: [VersionSite]
    }

    func report() throws -> Report {
        let found = try VersionProject.discover(at: URL(fileURLWithPath: project))
        return Report(
            version: try? found.current(.marketingVersion),
            build: try? found.current(.buildNumber),
            sites: found.sites
        )
    }

    func run() throws {
        let report = try report()
        if output.json { return try output.printJSON(report) }
        print("Version: \(report.version ?? "none, or different values") (build \(report.build ?? "none, or different values"))")
        for site in report.sites {
            print("  \(site.location)  \(site.key) = \(site.value)\(site.isReference ? "  (reference)" : "")")
        }
    }
}

/// `kizuna version bump`: the next marketing version and build number, written wherever the project keeps them.
struct VersionBumpCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bump",
        abstract: "Bump the project's marketing version and build number where the project keeps them.",
        discussion: """
            Writes MARKETING_VERSION and CURRENT_PROJECT_VERSION in every *.xcodeproj/project.pbxproj and *.xcconfig, \
            and CFBundleShortVersionString and CFBundleVersion in every Info.plist that holds a literal value; a value \
            such as $(MARKETING_VERSION) is left alone. Only the values change. The new build number is --build N, \
            else the commit count with --build-from-commits, else the current one plus one (its last component).
            """
    )

    @Argument(help: "major, minor, patch or build (same version, new build number). Asked on a terminal when left out.")
    var kind: BumpKind?

    @Option(help: "The Xcode project's directory.") var project = "."

    @Option(name: .customLong("build"), help: "The new build number.") var build: String?

    @Flag(name: .customLong("build-from-commits"), help: "Use the commit count (git rev-list --count HEAD) as the build number.")
    var buildFromCommits = false

    @Flag(help: "Create the branch release/<version> after writing.") var branch = false

    @Flag(name: .customLong("dry-run"), help: "Print what would change and write nothing.") var dryRun = false

    @Flag(help: "Bump the highest value when places disagree, instead of refusing.") var force = false

    @OptionGroup var output: OutputOptions

    func validate() throws {
        if build != nil, buildFromCommits { throw ValidationError("Pass --build or --build-from-commits, not both.") }
        if let build, (try? BuildNumber(parsing: build)) == nil {
            throw ValidationError("--build must be a build number such as 46 or 1.2.3, got '\(build)'.")
        }
    }

    func run() throws {
        let result = try perform(ask: Self.askOnTerminal)
        if output.json { return try output.printJSON(result) }
        print(result.text)
    }

    /// Reads the project, chooses the new values and writes them (unless a dry run), then makes the branch.
    ///
    /// - Parameter ask: picks a kind when none was given, from the current pair and the four choices; `nil` when
    ///   there is no one to ask.
    func perform(ask: (VersionPair, [(kind: BumpKind, pair: VersionPair)]) -> BumpKind?) throws -> VersionBumpResult {
        let directory = URL(fileURLWithPath: project)
        let found = try VersionProject.discover(at: directory)
        let current = VersionPair(version: try found.current(.marketingVersion, force: force), build: try found.current(.buildNumber, force: force))
        let newBuild: String
        if let build {
            newBuild = build
        } else if buildFromCommits {
            newBuild = try Git.run(["rev-list", "--count", "HEAD"], in: directory)
        } else {
            newBuild = try VersionArithmetic.nextBuild(current.build)
        }
        let choices = try VersionArithmetic.choices(from: current, build: newBuild)
        guard let kind = kind ?? ask(current, choices) else {
            throw VersionBumpError(code: "no_kind", message: "Say what to bump: major, minor, patch or build (current \(current)).")
        }
        let next = choices.first { $0.kind == kind }!.pair
        let branchName = branch ? "release/\(next.version)" : nil
        if let branchName, try Git.hasBranch(branchName, in: directory) {
            throw VersionBumpError(code: "branch_exists", message: "The branch \(branchName) exists already; nothing was written.")
        }
        let values: [VersionField: String] = [.marketingVersion: next.version, .buildNumber: next.build]
        let written = dryRun ? found.sites.filter { !$0.isReference } : try found.write(values)
        if let branchName, !dryRun { _ = try Git.run(["checkout", "-b", branchName], in: directory) }
        return VersionBumpResult(
            kind: kind, from: current, to: next, dryRun: dryRun, branch: branchName,
            changes: written.map { VersionBumpResult.Change(site: $0, to: values[$0.field]!) },
            references: found.sites.filter(\.isReference)
        )
    }

    /// The menu on a terminal when no kind was given; `nil` when stdin or stdout is not a terminal.
    static func askOnTerminal(_ current: VersionPair, _ choices: [(kind: BumpKind, pair: VersionPair)]) -> BumpKind? {
        guard isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else { return nil }
        while true {
            print(VersionArithmetic.menu(current: current, choices: choices), terminator: "")
            guard let answer = readLine()?.trimmingCharacters(in: .whitespaces) else { return nil }
            if let number = Int(answer), choices.indices.contains(number - 1) { return choices[number - 1].kind }
            if let kind = BumpKind(rawValue: answer) { return kind }
        }
    }
}

/// What `kizuna version bump` did, or would do on a dry run.
struct VersionBumpResult: Encodable {
    struct Change: Encodable {
        var site: VersionSite
        var to: String
    }

    var kind: BumpKind
    var from: VersionPair
    var to: VersionPair
    var dryRun: Bool
    var branch: String?
    var changes: [Change]
    var references: [VersionSite]

    var text: String {
        var lines = ["\(from) → \(to)\(dryRun ? " (dry run: nothing written)" : "")"]
        for change in changes {
            lines.append("  \(change.site.location)  \(change.site.key)  \(change.site.value) → \(change.to)")
        }
        for site in references {
            lines.append("  \(site.location)  \(site.key) = \(site.value)  (reference, left as is)")
        }
        if let branch { lines.append(dryRun ? "Would create the branch \(branch)." : "Created the branch \(branch).") }
        return lines.joined(separator: "\n")
    }
}
