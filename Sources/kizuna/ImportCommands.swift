import ArgumentParser
import Foundation
import KizunaClient
import KizunaCore

extension ConfigCommand {
    /// `kizuna config import --firebase FILE`: a Firebase Remote Config template as this app's template.
    struct ImportFirebase: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Convert a Firebase Remote Config template to a Kizuna template and publish it as a new version.",
            discussion: """
                FILE is the template as `firebase remoteconfig:get -o FILE`, the REST API or the console's download \
                writes it. Conditions are translated where Kizuna has the same test: app.version, app.build, device.os, \
                device.language, device.country, percent, app.userProperty and app.customSignal (as attributes the app \
                sends), dateTime with a time zone, true and false, joined with &&, || and !; app.id with \
                --firebase-app-id. A condition that cannot be translated is listed with its path and left out with its \
                conditional values, never widened. Percentages get new buckets (the seed written, else \
                '\(FirebaseConditionTranslator.sharedPercentSeed)'), since Firebase's hash cannot be reproduced. \
                Parameter groups become each parameter's group.

                Exit status: 0 when everything was translated (and, without --validate-only, published); 1 when \
                something was not, and then nothing is published unless --allow-partial. --validate-only needs no \
                server: the Kizuna template goes to standard output, the report to standard error.
                """
        )

        @Option(name: .customLong("firebase"), help: ArgumentHelp("The Firebase template (JSON), or - for standard input.", valueName: "FILE"))
        var file: String
        @Option(name: .customLong("firebase-app-id"), help: "The Firebase app id (1:…:ios:…) this app is, to translate app.id tests.")
        var firebaseAppId: String?
        @Flag(name: .customLong("validate-only"), help: "Convert and print the Kizuna template; publish nothing.") var validateOnly = false
        @Flag(name: .customLong("allow-partial"), help: "Publish (or exit 0) even when something could not be translated.")
        var allowPartial = false
        @Option(help: "Also write the Kizuna template to this file.") var out: String?
        @Option(name: .shortAndLong, help: "Why: recorded in the history (default: \"Imported from Firebase\").") var message: String?
        @OptionGroup var expect: ExpectOption
        @OptionGroup var target: AppTarget

        /// What `--validate-only --json` prints.
        struct Report: Encodable {
            let template: JSONValue
            let problems: [FirebaseTemplateImport.Problem]
            let notes: [String]
        }

        func run() async throws {
            let imported = FirebaseTemplateImport(firebase: try readDocument(file), translator: .init(firebaseAppId: firebaseAppId))
            Self.report(imported)
            if let out {
                do {
                    try (try OutputOptions.jsonText(imported.template) + "\n").write(toFile: out, atomically: true, encoding: .utf8)
                } catch {
                    throw ValidationError("Could not write \(out): \(error.localizedDescription)")
                }
            }
            let complete = imported.problems.isEmpty || allowPartial
            if validateOnly {
                if target.output.json {
                    try target.output.printJSON(Report(template: imported.template, problems: imported.problems, notes: imported.notes))
                } else {
                    print(try OutputOptions.jsonText(imported.template))
                }
                if !complete { throw ExitCode.failure }
                return
            }
            guard complete else {
                var stderr = StandardError()
                print(
                    "Nothing was published: \(imported.problems.count) thing(s) could not be translated; see above, or pass --allow-partial.",
                    to: &stderr)
                throw ExitCode.failure
            }
            let (client, app) = try target.resolve()
            try await publishDocument(
                imported.template, of: .config, message: message ?? "Imported from Firebase", expecting: expect.precondition, client: client,
                app: app, output: target.output)
        }

        /// The counts, what was left out and the notes, on standard error.
        static func report(_ imported: FirebaseTemplateImport) {
            var stderr = StandardError()
            let (conditions, parameters) = (imported.conditionCount, imported.parameterCount)
            print(
                "Translated \(conditions.kizuna) of \(conditions.firebase) conditions and \(parameters.kizuna) of \(parameters.firebase) parameters.",
                to: &stderr)
            if !imported.problems.isEmpty {
                print("Not translated (left out):", to: &stderr)
                for problem in imported.problems { print("  \(problem)", to: &stderr) }
            }
            if !imported.notes.isEmpty {
                print("Notes:", to: &stderr)
                for note in imported.notes { print("  \(note)", to: &stderr) }
            }
        }

    }
}

extension GateCommand {
    /// `kizuna gate import --force-alert FILE`: the hand-made force-update parameter as the gate's minimum version.
    struct ImportForceAlert: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Turn a hand-made force-update parameter into the minimum version and its notice, and publish.",
            discussion: """
                FILE holds the parameter apps keep in Remote Config, {"title", "message", "version", "url"}, or with \
                --parameter KEY a whole Firebase template whose parameter KEY holds it as its default. Below `version` \
                the gate answers require (compared as versions: 3.10.0 is above 3.9.0), with the title and message as \
                the require notice in --language and `url` as its link (none: no link). Reads the live policy and \
                publishes over exactly that version, keeping its other fields and the notice's other languages. \
                --validate-only checks the parameter and prints the fields it would set, without a server.
                """
        )

        @Option(name: .customLong("force-alert"), help: ArgumentHelp("The parameter's JSON, or - for standard input.", valueName: "FILE")) var file:
            String
        @Option(help: "The parameter's key, when FILE is a whole Firebase template.") var parameter: String?
        @Option(help: "The language of the title and message, such as ja.") var language = "en"
        @Flag(name: .customLong("validate-only"), help: "Check and print the policy fields; publish nothing.") var validateOnly = false
        @Option(name: .shortAndLong, help: "Why: recorded in the history (default: \"Imported the force-update alert\").") var message: String?
        @OptionGroup var target: AppTarget

        func run() async throws {
            let document = try readDocument(file)
            let alertJSON: JSONValue
            if let parameter {
                alertJSON = try ForceAlertImport.parameter(parameter, inFirebaseTemplate: document)
            } else if document["parameters"] != nil || document["parameterGroups"] != nil {
                throw ValidationError("\(file) is a Firebase template: name the force-update parameter with --parameter KEY.")
            } else {
                alertJSON = document
            }
            let alert = try ForceAlertImport(parameter: alertJSON, language: language)
            if validateOnly {
                _ = try GatePolicy(parsing: alert.policy)
                return try target.output.printJSON(alert.policy)
            }
            let (client, app) = try target.resolve()
            let live = try await client.document(.gate, app: app)
            let policy = JSONValue.object(alert.merged(into: live.document.objectValue ?? [:]))
            try await publishDocument(
                policy, of: .gate, message: message ?? "Imported the force-update alert", expecting: .version(live.version), client: client,
                app: app, output: target.output)
        }
    }
}
