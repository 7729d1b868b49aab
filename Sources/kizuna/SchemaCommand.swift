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
            Publishing changes the store to follow the schema in the same transaction where that is instant: new \
            models become tables with their indexes, new fields columns (a constant default fills existing records at \
            once), dropped models and fields go. What takes time on a big table is recorded in that same transaction as a schema job, and the server runs \
            it in the background while it keeps answering: an index on a model that already has records (built \
            without blocking writes on PostgreSQL), and filling a default into existing records where the column \
            cannot (a DateTime or JSON default, or a field that becomes required), in batches that each commit. A job \
            survives a restart or a killed server and resumes where it stopped; until a backfill is done, reads return \
            the default for the records it has not reached. `jobs` lists them with their state and progress.

            Changes that drop or narrow stored data (a removed model or field, a changed type, optional to required \
            without a default) are refused, each listed, unless --allow-destructive. `plan -f FILE` prints what a \
            publish would change without changing anything.
            """,
        subcommands: [
            Publish.self, Plan.self, ShowDocument<SchemaDocumentKind>.self, HistoryOfDocument<SchemaDocumentKind>.self,
            DiffDocument<SchemaDocumentKind>.self,
            Rollback.self, Jobs.self,
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
            await announceJobs(of: published.version, app: app, client: client)
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
            await announceJobs(of: published.version, app: app, client: client)
        }
    }

    struct Jobs: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List the background jobs schema publishes left (index builds, backfills), newest first, with their progress.")

        @Option(help: "At most this many: 1 to 300.") var limit = 50
        @OptionGroup var target: AppTarget

        func validate() throws {
            guard (1...300).contains(limit) else { throw ValidationError("--limit must be from 1 to 300, got \(limit).") }
        }

        func run() async throws {
            let (client, app) = try target.resolve()
            let jobs = try await client.schemaJobs(app: app, limit: limit)
            if target.output.json { return try target.output.printJSON(DataJobList(jobs: jobs)) }
            if jobs.isEmpty { return print("No schema jobs for \(app).") }
            for job in jobs { print(jobLine(job)) }
        }
    }
}

/// One job a line: `12  v3  backfill  Message.seenAt  running  120000/200000 (60%)`.
func jobLine(_ job: DataJobInfo) -> String {
    var line = "\(job.id)  v\(job.schemaVersion)  \(job.kind)  \(job.model).\(job.target)  \(job.state)"
    if job.kind == "backfill", job.state != "cancelled" {
        line += "  \(job.done)/\(job.total)"
        if job.total > 0 { line += " (\(min(100, job.done * 100 / job.total))%)" }
    }
    if job.state == "failed" {
        line += " (attempt \(job.attempts)" + (job.nextAttemptAt.map { ", next at \($0.formatted(.iso8601))" } ?? "") + ")"
    }
    if let error = job.error { line += ": \(error)" }
    return line
}

/// After a publish: how many jobs it left running in the background, if any. Never fails the publish it follows.
private func announceJobs(of version: Int64, app: String, client: AdminClient) async {
    guard let jobs = try? await client.schemaJobs(app: app).filter({ $0.schemaVersion == version }), !jobs.isEmpty else { return }
    let kinds = Set(jobs.map(\.kind)).sorted().joined(separator: " and ")
    print("\(jobs.count) schema job\(jobs.count == 1 ? "" : "s") (\(kinds)) run in the background; `kizuna schema jobs` shows the progress.")
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
