import ArgumentParser
import Foundation
import KizunaClient
import KizunaCore

/// What `kizuna config` and `kizuna gate` share: both documents are versioned the same way on the server.
protocol DocumentCommandKind {
    static var kind: DocumentKind { get }
}

enum ConfigDocument: DocumentCommandKind {
    static let kind = DocumentKind.config
}

enum GateDocument: DocumentCommandKind {
    static let kind = DocumentKind.gate
}

/// `--app`, shared by every document command.
struct AppOption: ParsableArguments {
    @Option(help: "The app's id. Env: KIZUNA_APP.")
    var app: String?

    func id(_ environment: Environment) throws -> String {
        guard let app = app ?? environment["KIZUNA_APP"], !app.isEmpty else {
            throw ValidationError("Name the app: pass --app or set KIZUNA_APP.")
        }
        return app
    }
}

/// The app a command works on and how to reach its server: `--app`, `--server`, `--token`, `--json`.
struct AppTarget: ParsableArguments {
    @OptionGroup var app: AppOption
    @OptionGroup var server: ServerOptions
    @OptionGroup var output: OutputOptions

    /// The admin client and the app id, from flags or the environment.
    func resolve(requireToken: Bool = true) throws -> (client: AdminClient, app: String) {
        (try server.client(.process, requireToken: requireToken), try app.id(.process))
    }
}

/// `--expect-version`: the optimistic-concurrency guard of every write.
struct ExpectOption: ParsableArguments {
    @Option(
        name: .customLong("expect-version"),
        help: "Publish only if the live version is still this one (If-Match); without it, publish over whatever is live.")
    var version: Int64?

    var precondition: ExpectedVersion { version.map(ExpectedVersion.version) ?? .any }
}

struct PublishDocument<Kind: DocumentCommandKind>: AsyncParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(
            commandName: "publish",
            abstract: "Publish a \(Kind.kind.title) from a JSON file as a new version.",
            discussion: "A document that fails validation is refused with every problem listed, and the live one stays."
        )
    }

    @Option(name: .shortAndLong, help: "The JSON document, or - for standard input.") var file: String
    @Option(name: .shortAndLong, help: "Why: recorded in the history.") var message: String?
    @Flag(name: .customLong("validate-only"), help: "Only check the document; publish nothing.") var validateOnly = false
    @OptionGroup var expect: ExpectOption
    @OptionGroup var target: AppTarget

    func run() async throws {
        let (client, app) = try target.resolve()
        let document = try readDocument(file)
        if validateOnly {
            let result = try await client.validate(Kind.kind, app: app, document: document)
            if target.output.json { return try target.output.printJSON(result) }
            return print("The \(Kind.kind.title) is valid (live version: \(result.currentVersion)).")
        }
        try await publishDocument(
            document, of: Kind.kind, message: message, expecting: expect.precondition, client: client, app: app, output: target.output)
    }
}

/// Publishes `document` as a new version and says so: its record with `--json`, else one line.
func publishDocument(
    _ document: JSONValue,
    of kind: DocumentKind,
    message: String?,
    expecting precondition: ExpectedVersion,
    client: AdminClient,
    app: String,
    output: OutputOptions
) async throws {
    let published = try await client.publish(kind, app: app, document: document, message: message, expecting: precondition)
    if output.json { return try output.printJSON(published) }
    print("Published \(kind.title) version \(published.version) of \(app).")
}

struct HistoryOfDocument<Kind: DocumentCommandKind>: AsyncParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: "history", abstract: "List kept versions of the \(Kind.kind.title), newest first.")
    }

    @Option(help: "At most this many (1–300).") var limit = 50
    @Option(help: "Only versions older than this one.") var before: Int64?
    @OptionGroup var target: AppTarget

    func validate() throws {
        guard (1...300).contains(limit) else { throw ValidationError("--limit must be between 1 and 300, got \(limit).") }
    }

    func run() async throws {
        let (client, app) = try target.resolve()
        let versions = try await client.history(Kind.kind, app: app, limit: limit, before: before)
        if target.output.json { return try target.output.printJSON(versions) }
        if versions.isEmpty { return print("No \(Kind.kind.title) published for \(app) yet.") }
        for version in versions {
            let rollback = version.rollbackOf.map { " (rollback to \($0))" } ?? ""
            print("\(version.version)  \(version.publishedAt.formatted(.iso8601))  \(version.author)  \(version.message ?? "")\(rollback)")
        }
    }
}

struct ShowDocument<Kind: DocumentCommandKind>: AsyncParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: "show", abstract: "Print the live \(Kind.kind.title), or a kept version of it.")
    }

    @Argument(help: "A version from `history`; the live one when left out.") var version: Int64?
    @OptionGroup var target: AppTarget

    func run() async throws {
        let (client, app) = try target.resolve()
        let document =
            if let version {
                try await client.document(Kind.kind, app: app, version: version)
            } else {
                try await client.document(Kind.kind, app: app)
            }
        try printDocument(document, of: Kind.kind, output: target.output)
    }
}

struct DiffDocument<Kind: DocumentCommandKind>: AsyncParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: "diff", abstract: "Show what changed in the \(Kind.kind.title) between two versions.")
    }

    @Argument(help: "The older version.") var from: Int64
    @Argument(help: "The newer version; the live one when left out.") var to: Int64?
    @OptionGroup var target: AppTarget

    func run() async throws {
        let (client, app) = try target.resolve()
        let diff = try await client.diff(Kind.kind, app: app, from: from, to: to)
        if target.output.json { return try target.output.printJSON(diff) }
        if diff.changes.isEmpty { return print("Versions \(diff.from) and \(diff.to) are the same.") }
        for change in diff.changes {
            switch change.kind {
            case .added: print("+ \(change.path): \(compact(change.after))")
            case .removed: print("- \(change.path): \(compact(change.before))")
            case .changed: print("~ \(change.path): \(compact(change.before)) -> \(compact(change.after))")
            }
        }
    }
}

struct RollbackDocument<Kind: DocumentCommandKind>: AsyncParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: "rollback", abstract: "Publish a kept version of the \(Kind.kind.title) again, as a new version.")
    }

    @Argument(help: "The version to restore.") var version: Int64
    @Option(name: .shortAndLong, help: "Why: recorded in the history.") var message: String?
    @OptionGroup var expect: ExpectOption
    @OptionGroup var target: AppTarget

    func run() async throws {
        let (client, app) = try target.resolve()
        let published = try await client.rollback(Kind.kind, app: app, to: version, message: message, expecting: expect.precondition)
        if target.output.json { return try target.output.printJSON(published) }
        print("Rolled the \(Kind.kind.title) of \(app) back to version \(version), published as version \(published.version).")
    }
}

/// Reads a JSON document from a file or standard input, naming the file when it is not JSON.
func readDocument(_ path: String) throws -> JSONValue {
    let text = try readText(path)
    do {
        return try JSONValue(parsing: text)
    } catch let error as JSONValue.ParseError {
        throw ValidationError("\(path == "-" ? "Standard input" : path) is not JSON: \(error.description(in: text))")
    }
}

/// Reads a text file or standard input, naming the file when it cannot be read.
func readText(_ path: String) throws -> String {
    let data: Data
    do {
        data = path == "-" ? FileHandle.standardInput.readDataToEndOfFile() : try Data(contentsOf: URL(fileURLWithPath: path))
    } catch {
        throw ValidationError("Could not read \(path): \(error.localizedDescription)")
    }
    guard let text = String(data: data, encoding: .utf8) else { throw ValidationError("\(path) is not UTF-8 text.") }
    return text
}

/// A document's metadata as text on standard error, then its body on standard output: pretty JSON, or for a data
/// schema its SDL (or the whole record with `--json`).
func printDocument(_ document: PublishedDocument, of kind: DocumentKind, output: OutputOptions) throws {
    if output.json { return try output.printJSON(document) }
    var stderr = StandardError()
    let rollback = document.rollbackOf.map { ", rollback to \($0)" } ?? ""
    print("# version \(document.version) by \(document.author) at \(document.publishedAt.formatted(.iso8601))\(rollback)", to: &stderr)
    if kind == .schema { return print(try SchemaDocument.sdl(in: document.document)) }
    try output.printJSON(document.document)
}

/// A value on one line, for diffs.
func compact(_ value: JSONValue?) -> String {
    guard let value, let data = try? WireFormat.canonicalEncoder().encode(value) else { return "(none)" }
    return String(decoding: data, as: UTF8.self)
}
