import ArgumentParser
import Foundation
import KizunaClient
import KizunaCore

/// `kizuna data`: an app's records through its data API, for operators.
struct DataCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "data",
        abstract: "Read an app's records through its data API (GraphQL), as the operator or as one of its accounts.",
        subcommands: [Query.self]
    )

    struct Query: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run a GraphQL document on the app's live data schema and print the answer.",
            discussion: """
                The document runs as the app's own POST /v1/apps/{app}/graphql runs it: the same queries (getX, \
                listXs, listXsBy<Index>), the same limits, the same answer. Without --as it runs as the operator, \
                whom every @auth rule lets in, so it reads every record of every model; with --as USER it runs as \
                that account (its id usr_… or its identifier) with its groups, and reads what the app would show it.

                The answer is printed as JSON with sorted keys, with or without --json. When it has errors, each \
                is also printed on standard error with its extensions.code, and the exit status is 1.

                Examples:
                  kizuna data query --app shop -f notes.graphql
                  echo '{ listNotes(limit: 5) { items { id text } nextToken } }' | kizuna data query --app shop -f -
                  kizuna data query --app shop -f page.graphql --variables '{"limit": 20}' --as mio@example.com
                  kizuna data query --app shop -f page.graphql --variables @variables.json --operation-name Page
                """
        )

        @Option(name: .shortAndLong, help: "The GraphQL document, or - for standard input.") var file: String
        @Option(help: "The document's variables: a JSON object, or @FILE to read it from a file (@- for standard input).")
        var variables: String?
        @Option(name: .customLong("operation-name"), help: "The operation to run, when the document has several.") var operationName: String?
        @Option(name: .customLong("as"), help: "Run as this account (its id usr_… or its identifier) instead of the operator.")
        var asUser: String?
        @OptionGroup var target: AppTarget

        func validate() throws {
            if file == "-" && variables == "@-" { throw ValidationError("-f - and --variables @- cannot both read standard input.") }
            if let asUser, asUser.isEmpty { throw ValidationError("--as needs an account: its id (usr_…) or its identifier.") }
        }

        func run() async throws {
            let (client, app) = try target.resolve()
            let document = try readText(file)
            let answer = try await client.query(
                document, app: app, variables: try variableValues(), operationName: operationName, asUser: asUser)
            try target.output.printJSON(answer)
            let errors = answer["errors"]?.arrayValue ?? []
            guard !errors.isEmpty else { return }
            var stderr = StandardError()
            for error in errors { print(describe(error), to: &stderr) }
            throw ExitCode.failure
        }

        /// `--variables` as an object: the JSON given, or read from the file after `@`.
        private func variableValues() throws -> [String: JSONValue]? {
            guard let variables else { return nil }
            let text = try variables.hasPrefix("@") ? readText(String(variables.dropFirst())) : variables
            guard let value = try? JSONValue(parsing: text) else {
                throw ValidationError("--variables is not JSON: give an object such as '{\"limit\": 20}', or @FILE.")
            }
            guard case .object(let members) = value else {
                throw ValidationError("--variables must be a JSON object of variable names to values, not a \(value.typeName).")
            }
            return members
        }
    }
}

/// One GraphQL error on a line: `code: message (at listNotes.items.0)`.
private func describe(_ error: JSONValue) -> String {
    let code = error["extensions"]?["code"]?.stringValue ?? "error"
    let message = error["message"]?.stringValue ?? "(no message)"
    let path = (error["path"]?.arrayValue ?? []).map { segment in
        segment.stringValue ?? segment.numberValue.map { String(Int($0)) } ?? "?"
    }
    return "\(code): \(message)" + (path.isEmpty ? "" : " (at \(path.joined(separator: ".")))")
}
