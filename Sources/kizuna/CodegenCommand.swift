import ArgumentParser
import Foundation
import KizunaClient
import KizunaCore
import KizunaServer

/// `kizuna codegen swift`: Swift for an app's data schema.
struct CodegenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "codegen",
        abstract: "Generate client code from an app's data schema.",
        subcommands: [SwiftTarget.self]
    )

    struct SwiftTarget: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "swift",
            abstract: "Write Swift for the Kizuna SDK: Codable models, enums, inputs and typed operations.",
            discussion: """
                Reads the schema live on the server (--app, with --server and --token) or a .graphql file (--schema), \
                and writes Models.swift, Inputs.swift and Operations.swift into the output directory, replacing the \
                files of an earlier run. Every model gets get, list, create, update, delete, onCreate, onUpdate and \
                onDelete operations, and each @index its own list query (listMessagesByRoom → Message.listByRoom(roomId:…)), \
                with a condition on its first sort key; each model's inputs also make outbox mutations \
                (OutboxMutation.create(CreateMessageInput(…), parent:)). The output depends on the schema alone: \
                generating again from an unchanged schema changes nothing.

                Example: kizuna codegen swift --schema Examples/Chat/schema.graphql -o Sources/Chat/Generated
                """
        )

        @Option(help: "A .graphql file holding the schema, instead of the one live on the server.")
        var schema: String?

        @Option(help: "The app whose live schema to read. Env: KIZUNA_APP.")
        var app: String?

        @OptionGroup var server: ServerOptions

        @Option(name: [.customShort("o"), .long], help: "The directory to write into (created if missing).")
        var output: String

        func run() async throws {
            let (sdl, source) = try await schemaText()
            let files = try SwiftCodegen(try DataSchema(sdl: sdl), source: source).files()
            let directory = URL(fileURLWithPath: output, isDirectory: true)
            do {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                for file in files {
                    try Data(file.contents.utf8).write(to: directory.appendingPathComponent(file.name), options: .atomic)
                }
            } catch {
                throw KizunaError(.badRequest, "Could not write into \(output): \(error.localizedDescription)", field: "output")
            }
            print("Wrote \(files.map(\.name).joined(separator: ", ")) into \(output) from \(source).")
        }

        private func schemaText() async throws -> (sdl: String, source: String) {
            if let schema {
                guard app == nil else { throw ValidationError("Pass --schema or --app, not both.") }
                do {
                    return (try String(contentsOfFile: schema, encoding: .utf8), URL(fileURLWithPath: schema).lastPathComponent)
                } catch {
                    throw KizunaError(.notFound, "Could not read \(schema): \(error.localizedDescription)", field: "schema")
                }
            }
            guard let app = app ?? ProcessInfo.processInfo.environment["KIZUNA_APP"], !app.isEmpty else {
                throw ValidationError("Name the schema: pass --schema FILE, or --app (or set KIZUNA_APP) to read the live one.")
            }
            let client = try server.client(.process)
            let live = try await client.document(.schema, app: app)
            return (try SchemaDocument.sdl(in: live.document), "app \(app), schema version \(live.version)")
        }
    }
}
