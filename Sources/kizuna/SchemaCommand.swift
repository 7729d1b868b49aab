import ArgumentParser
import Foundation
import KizunaClient
import KizunaCore

/// `kizuna schema`: an app's data schema (GraphQL SDL) through the admin API, versioned like config and gate.
struct SchemaCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema",
        abstract: "Publish, plan, read and roll back an app's data schema (GraphQL SDL).",
        discussion: """
            Publishing changes the store to follow the schema in the same transaction: new models become tables, new \
            fields columns, new indexes indexes. Changes that drop or narrow stored data (a removed model or field, a \
            changed type, optional to required without a default) are refused, each listed, unless \
            --allow-destructive. `plan -f FILE` prints what a publish would change without changing anything.
            """,
        subcommands: [
            Publish.self, Plan.self, ShowDocument<SchemaDocumentKind>.self, HistoryOfDocument<SchemaDocumentKind>.self,
            DiffDocument<SchemaDocumentKind>.self,
            Rollback.self,
        ]
    )

    struct Publish: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Publish a data schema from a .graphql file as a new version, changing the store to follow it.")

        @Option(name: .shortAndLong, help: "The GraphQL SDL file, or - for standard input.") var file: String
        @Option(name: .shortAndLong, help: "Why: recorded in the history.") var message: String?
        @Flag(name: .customLong("allow-destructive"), help: "Also apply changes that drop or narrow stored data.") var allowDestructive = false
        @Flag(name: .customLong("validate-only"), help: "Only check the schema and its plan; change nothing.") var validateOnly = false
        @OptionGroup var expect: ExpectOption
        @OptionGroup var target: AppTarget

        func run() async throws {
            let (client, app) = try target.resolve()
            let document = SchemaDocument.document(sdl: try readText(file))
            if validateOnly {
                let result = try await client.validate(.schema, app: app, document: document, allowDestructive: allowDestructive)
                if target.output.json { return try target.output.printJSON(result) }
                return printPlan(result)
            }
            let published = try await client.publish(
                .schema, app: app, document: document, message: message, expecting: expect.precondition, allowDestructive: allowDestructive)
            if target.output.json { return try target.output.printJSON(published) }
            print("Published data schema version \(published.version) of \(app).")
        }
    }

    struct Plan: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print what publishing a schema would change in the store, destructive changes marked; change nothing.")

        @Option(name: .shortAndLong, help: "The GraphQL SDL file, or - for standard input.") var file: String
        @OptionGroup var target: AppTarget

        func run() async throws {
            let (client, app) = try target.resolve()
            let document = SchemaDocument.document(sdl: try readText(file))
            let result = try await client.validate(.schema, app: app, document: document, allowDestructive: true)
            if target.output.json { return try target.output.printJSON(result) }
            printPlan(result)
        }
    }

    struct Rollback: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Publish a kept version of the data schema again, as a new version, changing the store to follow it.")

        @Argument(help: "The version to restore.") var version: Int64
        @Option(name: .shortAndLong, help: "Why: recorded in the history.") var message: String?
        @Flag(name: .customLong("allow-destructive"), help: "Also apply changes that drop or narrow stored data.") var allowDestructive = false
        @OptionGroup var expect: ExpectOption
        @OptionGroup var target: AppTarget

        func run() async throws {
            let (client, app) = try target.resolve()
            let published = try await client.rollback(
                .schema, app: app, to: version, message: message, expecting: expect.precondition, allowDestructive: allowDestructive)
            if target.output.json { return try target.output.printJSON(published) }
            print("Rolled the data schema of \(app) back to version \(version), published as version \(published.version).")
        }
    }
}

enum SchemaDocumentKind: DocumentCommandKind {
    static let kind = DocumentKind.schema
}

/// The plan of a schema publish, one change a line; destructive ones marked.
private func printPlan(_ result: DocumentValidation) {
    let changes = result.changes ?? []
    if changes.isEmpty { return print("No changes to the store (live version: \(result.currentVersion)).") }
    print("Against live version \(result.currentVersion):")
    for change in changes {
        print("  \(change.destructive ? "!" : "+") \(change.summary)\(change.destructive ? "  (destructive: needs --allow-destructive)" : "")")
    }
}
