import ArgumentParser
import Foundation
import KizunaClient
import KizunaCore

/// `kizuna aasa`: the served apple-app-site-association file and the per-app settings behind it.
struct AASACommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "aasa",
        abstract: "The apple-app-site-association file and the per-app settings it is generated from.",
        subcommands: [Show.self, Settings.self]
    )

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the generated file: one app's part, or without --app the whole served file.")
        @Option(help: "The app whose part to print.") var app: String?
        @OptionGroup var server: ServerOptions

        func run() async throws {
            let client = try server.client(.process)
            let bytes = try await client.associationFile(app: app)
            FileHandle.standardOutput.write(bytes + Data("\n".utf8))
        }
    }

    struct Settings: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print an app's associated-domain settings, or replace them with -f FILE (JSON; '-' reads standard input).")
        @Option(help: "The app.") var app: String
        @Option(name: [.short, .customLong("file")], help: "Settings to store.") var file: String?
        @OptionGroup var server: ServerOptions

        func run() async throws {
            let client = try server.client(.process)
            var settings: AssociatedDomainSettings
            if let file {
                let data = file == "-" ? FileHandle.standardInput.readDataToEndOfFile() : try Data(contentsOf: URL(fileURLWithPath: file))
                do {
                    settings = try JSONDecoder().decode(AssociatedDomainSettings.self, from: data)
                } catch {
                    throw ValidationError("\(file) is not associated-domain settings JSON: \(error)")
                }
                settings = try await client.setAssociatedDomains(app: app, settings)
            } else {
                settings = try await client.associatedDomains(app: app)
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            FileHandle.standardOutput.write(try encoder.encode(settings) + Data("\n".utf8))
        }
    }
}
