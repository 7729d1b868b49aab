import ArgumentParser
import Foundation
import KizunaClient
import KizunaCore

/// `kizuna release`: the release registry, its artifacts, and blocking a bad release through the update gate.
struct ReleaseCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "release",
        abstract: "Record releases, attach and fetch their artifacts, and block a bad one.",
        discussion: """
            A release is an app's (version, build) pair — unique, as the store requires — with its channel, notes, \
            commit and branch, and the files attached to it (archive, dSYM zip, ipa). `block VERSION` publishes a new \
            gate policy with the version in blockedVersions, so devices on it must update; `unblock` takes it out.
            """,
        subcommands: [
            Create.self, List.self, Show.self, Upload.self, Download.self, Remove.self, Block.self, Unblock.self, ReleaseInspectCommand.self,
            Package.self,
        ]
    )
}
