import ArgumentParser
import Foundation
import KizunaClient
import KizunaCore

extension ReleaseCommand {
    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Record a release.",
            discussion: """
                The tag comes from --tag-template (env KIZUNA_RELEASE_TAG_TEMPLATE; default v{version}-{build}), with \
                {version}, {build}, {channel} and {utc} (yyyyMMdd-HHmmss) filled in. A (version, build) pair the app \
                already has is refused (409): raise the build number.
                """)

        @Argument(help: "The marketing version, e.g. 3.10.1.") var version: String
        @Argument(help: "The build number, e.g. 4321.") var build: String
        @Option(help: "appstore, testflight, adhoc or internal.") var channel: ReleaseChannel = .appstore
        @Option(help: "Release notes.") var notes: String?
        @Option(help: "The commit it was built from.") var commit: String?
        @Option(help: "The branch it was built from.") var branch: String?
        @Option(name: .customLong("tag-template"), help: "The tag's template.") var tagTemplate: String?
        @OptionGroup var target: AppTarget

        func run() async throws {
            let (client, app) = try target.resolve()
            let template = tagTemplate ?? ProcessInfo.processInfo.environment["KIZUNA_RELEASE_TAG_TEMPLATE"] ?? ReleaseTag.defaultTemplate
            let tag = ReleaseTag.render(template, version: version, build: build, channel: channel, at: Date())
            let release = try await client.createRelease(
                app: app, NewRelease(version: version, build: build, channel: channel, notes: notes, commit: commit, branch: branch, tag: tag))
            if target.output.json { return try target.output.printJSON(release) }
            print("Recorded \(app) \(release.version) (\(release.build)) as release \(release.id), tag \(release.tag).")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List an app's releases, newest first.")
        @Option(help: "How many (1–500).") var limit = 50
        @OptionGroup var target: AppTarget

        func run() async throws {
            let (client, app) = try target.resolve()
            let releases = try await client.releases(app: app, limit: limit)
            if target.output.json { return try target.output.printJSON(ReleaseList(releases: releases)) }
            for release in releases { print(ReleaseCommand.line(release)) }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a release and its artifacts.")
        @Argument(help: "The release: its id, a version (the newest build), or VERSION(BUILD).") var release: String
        @OptionGroup var target: AppTarget

        func run() async throws {
            let (client, app) = try target.resolve()
            let found = try await client.release(app: app, release)
            if target.output.json { return try target.output.printJSON(found) }
            print(ReleaseCommand.line(found))
            for (label, value) in [("notes", found.notes), ("commit", found.commit), ("branch", found.branch)] {
                if let value { print("  \(label): \(value)") }
            }
            for artifact in found.artifacts {
                print("  \(artifact.name)  \(artifact.size) bytes  sha256 \(artifact.sha256)  md5 \(artifact.md5)")
            }
        }
    }

    struct Upload: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Attach files to a release: sent in chunks, resumed where the server's copy ends, checked against their SHA-256.",
            discussion: """
                A dropped connection or a restarted server is retried (five times in a row, backing off); running the same \
                command again after it gave up resumes the unfinished upload rather than starting over. The server discards \
                an unfinished upload a week after its last bytes.
                """)
        @Argument(help: "The release.") var release: String
        @Argument(help: "The files (archive, dSYM zip, ipa, …); each is named by its file name.") var files: [String]
        @OptionGroup var target: AppTarget

        func run() async throws {
            let (client, app) = try target.resolve()
            for path in files {
                let file = URL(fileURLWithPath: path)
                let meter = TransferMeter(verb: .upload, label: file.lastPathComponent)
                let stored: ReleaseArtifact
                do {
                    stored = try await client.uploadArtifactResumably(
                        app: app, release: release, name: file.lastPathComponent, file: file, progress: meter.report)
                } catch {
                    meter.fail()
                    throw error
                }
                meter.finish()
                if target.output.json {
                    try target.output.printJSON(stored)
                } else {
                    print("Uploaded \(stored.name): \(stored.size) bytes, sha256 \(stored.sha256).")
                }
            }
        }
    }

    struct Download: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Download a release's artifact, checked against its SHA-256; an interrupted download resumes when run again.")
        @Argument(help: "The release.") var release: String
        @Argument(help: "The artifact's name.") var name: String
        @Option(name: .shortAndLong, help: "Where to write it (default: its name, here).") var output: String?
        @OptionGroup var target: AppTarget

        func run() async throws {
            let (client, app) = try target.resolve()
            let destination = URL(fileURLWithPath: output ?? name)
            let meter = TransferMeter(verb: .download, label: name)
            let artifact: ReleaseArtifact
            do {
                artifact = try await client.downloadArtifact(app: app, release: release, name: name, to: destination, progress: meter.report)
            } catch {
                meter.fail()
                throw error
            }
            meter.finish()
            print("Wrote \(destination.path): \(artifact.size) bytes, sha256 \(artifact.sha256).")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rm", abstract: "Delete a release and its artifacts.")
        @Argument(help: "The release.") var release: String
        @OptionGroup var target: AppTarget

        func run() async throws {
            let (client, app) = try target.resolve()
            try await client.deleteRelease(app: app, release)
            print("Deleted release \(release) of \(app).")
        }
    }

    /// `1a2b3c  3.10.1 (4321)  appstore  v3.10.1-4321  2026-11-26T06:00:00Z  [blocked]`.
    static func line(_ release: ReleaseRecord) -> String {
        let blocked = release.blocked ? "  BLOCKED" : ""
        return "\(release.id)  \(release.version) (\(release.build))  \(release.channel.rawValue)  \(release.tag)  "
            + "\(release.createdAt.formatted(.iso8601))  \(release.artifacts.count) artifact(s)\(blocked)"
    }

    /// A progress line: on standard error when standard output carries JSON.
    static func progress(_ line: String, json: Bool) {
        if json { FileHandle.standardError.write(Data((line + "\n").utf8)) } else { print(line) }
    }
}

extension ReleaseChannel: ExpressibleByArgument {}
