import ArgumentParser
import Foundation
import KizunaClient
import KizunaCore

/// `kizuna config`: the remote config template through the admin API.
struct ConfigCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Read, change, publish and roll back an app's remote config template.",
        discussion: """
            Every publish is a new version with its author and message; `history`, `show N`, `diff A B` and \
            `rollback N` work on the kept versions. Writes take --expect-version N to fail (412) instead of \
            overwriting someone else's publish; `set` always does.
            """,
        subcommands: [
            Get.self, SetParameter.self, PublishDocument<ConfigDocument>.self, ImportFirebase.self, HistoryOfDocument<ConfigDocument>.self,
            ShowDocument<ConfigDocument>.self, DiffDocument<ConfigDocument>.self, RollbackDocument<ConfigDocument>.self,
        ]
    )

    struct Get: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the live template, or one parameter of it.")

        @Argument(help: "A parameter key; the whole template when left out.") var key: String?
        @OptionGroup var target: AppTarget

        func run() async throws {
            let (client, app) = try target.resolve()
            let live = try await client.document(.config, app: app)
            guard let key else { return try printDocument(live, of: .config, output: target.output) }
            guard let parameter = live.document["parameters"]?[key] else {
                throw ValidationError("The live template (version \(live.version)) has no parameter '\(key)'.")
            }
            try target.output.printJSON(parameter)
        }
    }

    struct SetParameter: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set",
            abstract: "Set one parameter's default and publish the result as a new version.",
            discussion: "Reads the live template and publishes over exactly that version, so a concurrent publish fails (412) instead of being lost."
        )

        @Argument(help: "The parameter key.") var key: String
        @Argument(help: "The new default: text, a number, true/false, or JSON for json parameters.") var value: String
        @Option(help: "string, number, bool or json; needed for a new parameter, else the parameter's own.") var type: ValueType?
        @Option(help: "A description for the parameter.") var description: String?
        @Option(name: .shortAndLong, help: "Why: recorded in the history (default: \"Set <key>\").") var message: String?
        @OptionGroup var target: AppTarget

        enum ValueType: String, ExpressibleByArgument, CaseIterable {
            case string, number, bool, json
        }

        func run() async throws {
            let (client, app) = try target.resolve()
            let live = try await client.document(.config, app: app)
            var template = live.document.objectValue ?? [:]
            var parameters = template["parameters"]?.objectValue ?? [:]
            var parameter = parameters[key]?.objectValue ?? [:]
            guard let type = type ?? parameter["type"]?.stringValue.flatMap(ValueType.init(rawValue:)) else {
                throw ValidationError("'\(key)' is a new parameter: give its --type (string, number, bool or json).")
            }
            parameter["type"] = .string(type.rawValue)
            parameter["default"] = try Self.parse(value, as: type)
            if let description { parameter["description"] = .string(description) }
            parameters[key] = .object(parameter)
            template["parameters"] = .object(parameters)
            let published = try await client.publish(
                .config, app: app, document: .object(template), message: message ?? "Set \(key)", expecting: .version(live.version))
            if target.output.json { return try target.output.printJSON(published) }
            print("Set \(key) and published config template version \(published.version) of \(app).")
        }

        static func parse(_ text: String, as type: ValueType) throws -> JSONValue {
            do {
                return try RemoteConfigTemplate.ValueType(rawValue: type.rawValue)!.value(fromText: text)
            } catch {
                throw ValidationError("\(error.message).")
            }
        }
    }
}
