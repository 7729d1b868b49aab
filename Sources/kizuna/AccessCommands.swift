import ArgumentParser
import Foundation
import KizunaClient
import KizunaCore

/// `kizuna app key`: an app's API keys, which `allow: public` data rules let in.
struct APIKeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key",
        abstract: "Create, list and revoke an app's API keys (for the data API's public rules).",
        subcommands: [Create.self, List.self, Revoke.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a key; its secret is printed this once.")
        @Option(name: .customLong("expires-in-days"), help: "Days until it expires: 1 to 365.") var expiresInDays: Int
        @Option(help: "What it is for.") var name: String?
        @OptionGroup var target: AppTarget

        func validate() throws {
            guard (1...365).contains(expiresInDays) else { throw ValidationError("--expires-in-days must be from 1 to 365, got \(expiresInDays).") }
        }

        func run() async throws {
            let (client, app) = try target.resolve()
            let created = try await client.createAPIKey(app: app, NewAPIKey(name: name, expiresInDays: expiresInDays))
            if target.output.json { return try target.output.printJSON(created) }
            print("\(created.key)\n(expires \(created.info.expiresAt.formatted(.iso8601)); only its hash is kept, so store it now)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the app's keys, newest first.")
        @OptionGroup var target: AppTarget

        func run() async throws {
            let (client, app) = try target.resolve()
            let keys = try await client.apiKeys(app: app)
            if target.output.json { return try target.output.printJSON(APIKeyList(keys: keys)) }
            if keys.isEmpty { return print("No API keys for \(app).") }
            for key in keys {
                let state = key.revokedAt != nil ? "revoked" : key.expiresAt <= Date() ? "expired" : "live"
                print("\(key.id)  \(state)  expires \(key.expiresAt.formatted(.iso8601))  \(key.name)")
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a key at once.")
        @Argument(help: "The key's id, from `list`.") var id: String
        @OptionGroup var target: AppTarget

        func run() async throws {
            let (client, app) = try target.resolve()
            let revoked = try await client.revokeAPIKey(app: app, id: id)
            if target.output.json { return try target.output.printJSON(revoked) }
            print("Revoked \(revoked.id).")
        }
    }
}

/// `kizuna user group`: the groups an account is in, which `allow: groups` data rules check.
struct UserGroupCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "group",
        abstract: "Add accounts to groups and remove them (for the data API's group rules).",
        subcommands: [Add.self, Remove.self, List.self]
    )

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Add an account to a group.")
        @Argument(help: "The account: its id or identifier.") var user: String
        @Argument(help: "The group.") var group: String
        @OptionGroup var server: ServerOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let groups = try await server.client(.process).addUser(user, toGroup: group)
            if output.json { return try output.printJSON(UserGroups(groups: groups)) }
            print("\(user) is in: \(groups.joined(separator: ", "))")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rm", abstract: "Remove an account from a group.")
        @Argument(help: "The account: its id or identifier.") var user: String
        @Argument(help: "The group.") var group: String
        @OptionGroup var server: ServerOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let groups = try await server.client(.process).removeUser(user, fromGroup: group)
            if output.json { return try output.printJSON(UserGroups(groups: groups)) }
            print(groups.isEmpty ? "\(user) is in no group." : "\(user) is in: \(groups.joined(separator: ", "))")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the groups an account is in.")
        @Argument(help: "The account: its id or identifier.") var user: String
        @OptionGroup var server: ServerOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let groups = try await server.client(.process).groups(ofUser: user)
            if output.json { return try output.printJSON(UserGroups(groups: groups)) }
            print(groups.isEmpty ? "\(user) is in no group." : groups.joined(separator: "\n"))
        }
    }
}
