import ArgumentParser
import Foundation
import KizunaClient
import KizunaCore

struct AppCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "app",
        abstract: "Manage the apps registry through the admin API.",
        subcommands: [Add.self, List.self, Show.self, Remove.self, APIKeyCommand.self]
    )

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Register an app.")

        @Option(help: "Slug: lowercase letters, digits and hyphens, e.g. 'my-app'.") var id: String
        @Option(help: "Display name.") var name: String
        @Option(help: "One of: \(Platform.allCases.map(\.rawValue).joined(separator: ", ")).") var platform: Platform
        @Option(name: .customLong("bundle-id"), help: "Bundle identifier, e.g. com.example.app.") var bundleId: String
        @Option(name: .customLong("team-id"), help: "10-character Apple team id (required for Apple platforms).") var teamId: String?
        @Option(name: .customLong("store-url"), help: "App Store or Play page (https).") var storeURL: String?
        @OptionGroup var server: ServerOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try server.client(.process)
            let app = try await client.createApp(
                NewApp(id: id, name: name, platform: platform, bundleId: bundleId, teamId: teamId, storeURL: storeURL))
            if output.json { return try output.printJSON(app) }
            print("Registered \(app.id).")
            printDetails(app)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List registered apps.")
        @OptionGroup var server: ServerOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try server.client(.process)
            let apps = try await client.apps()
            if output.json { return try output.printJSON(apps) }
            if apps.isEmpty { return print("No apps registered.") }
            for app in apps {
                print("\(app.id)  \(app.platform.rawValue)  \(app.bundleId)  \(app.name)")
            }
        }
    }

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show one app.")
        @Argument(help: "The app's id.") var id: String
        @OptionGroup var server: ServerOptions
        @OptionGroup var output: OutputOptions

        func run() async throws {
            let client = try server.client(.process)
            let app = try await client.app(id: id)
            if output.json { return try output.printJSON(app) }
            printDetails(app)
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rm", abstract: "Remove an app.")
        @Argument(help: "The app's id.") var id: String
        @OptionGroup var server: ServerOptions

        func run() async throws {
            let client = try server.client(.process)
            try await client.deleteApp(id: id)
            print("Removed \(id).")
        }
    }
}

extension Platform: ExpressibleByArgument {}

private func printDetails(_ app: AppRecord) {
    print(
        """
        id:        \(app.id)
        name:      \(app.name)
        platform:  \(app.platform.rawValue)
        bundle id: \(app.bundleId)
        team id:   \(app.teamId ?? "-")
        store URL: \(app.storeURL ?? "-")
        created:   \(app.createdAt.formatted(.iso8601))
        updated:   \(app.updatedAt.formatted(.iso8601))
        """
    )
}
