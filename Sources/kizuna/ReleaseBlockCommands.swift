import ArgumentParser
import Foundation
import KizunaClient
import KizunaCore

extension ReleaseCommand {
    struct Block: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Block a version: publish a gate policy with it in blockedVersions.",
            discussion: """
                Goes through the gate's own publishing: a new policy version with its message in the history, which \
                `gate diff` shows and `gate rollback` undoes, and which reaches connected SDKs at once. Devices on the \
                version are told to update (require).
                """)
        @Argument(help: "The version to block, e.g. 3.10.1.") var version: String
        @Option(name: .shortAndLong, help: "Why: recorded in the gate's history.") var message: String?
        @OptionGroup var target: AppTarget

        func run() async throws {
            try await ReleaseCommand.changeBlock(version, block: true, message: message ?? "Block \(version)", target: target)
        }
    }

    struct Unblock: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Take a version out of the gate policy's blockedVersions.")
        @Argument(help: "The version to unblock.") var version: String
        @Option(name: .shortAndLong, help: "Why: recorded in the gate's history.") var message: String?
        @OptionGroup var target: AppTarget

        func run() async throws {
            try await ReleaseCommand.changeBlock(version, block: false, message: message ?? "Unblock \(version)", target: target)
        }
    }

    /// Publishes the live gate policy with `version` added to or taken out of `blockedVersions`, over exactly the live
    /// version (a concurrent publish fails with 412 instead of being lost).
    static func changeBlock(_ version: String, block: Bool, message: String, target: AppTarget) async throws {
        let parsed: SemanticVersion
        do {
            parsed = try SemanticVersion(parsing: version)
        } catch {
            throw ValidationError("'\(version)' is not a version: \(error)")
        }
        let (client, app) = try target.resolve()
        let live = try await client.document(.gate, app: app)
        guard let policy = GatePolicy.changingBlock(of: parsed, block: block, in: live.document) else {
            print("\(version) is \(block ? "already blocked" : "not in blockedVersions") (gate policy version \(live.version)); nothing published.")
            return
        }
        let published = try await client.publish(.gate, app: app, document: policy, message: message, expecting: .version(live.version))
        if target.output.json { return try target.output.printJSON(published) }
        print("\(block ? "Blocked" : "Unblocked") \(version): gate policy version \(published.version) of \(app).")
    }
}
