import ArgumentParser
import Foundation
import KizunaClient
import KizunaCore
import KizunaServer
import Logging

/// The process environment, injectable so tests can check flag > environment > default.
struct Environment: Sendable {
    var values: [String: String]

    static var process: Environment { Environment(values: ProcessInfo.processInfo.environment) }

    subscript(_ key: String) -> String? {
        values[key].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// A whole-number setting: the flag, else the variable `key`, else `fallback`.
    /// - Throws: `ValidationError` naming `key` when the variable is not a number or the value is outside `range`.
    func integer(_ flag: Int?, _ key: String, _ fallback: Int, range: ClosedRange<Int>) throws -> Int {
        let value: Int
        if let flag {
            value = flag
        } else if let text = self[key] {
            guard let parsed = Int(text) else { throw ValidationError("\(key) must be a whole number, got '\(text)'.") }
            value = parsed
        } else {
            value = fallback
        }
        guard range.contains(value) else { throw ValidationError("\(key) must be in \(range.lowerBound)...\(range.upperBound), got \(value).") }
        return value
    }
}

/// Where the store is, for commands that open it directly.
struct StoreOptions: ParsableArguments {
    @Option(name: .customLong("data-dir"), help: "Directory of the embedded SQLite store. Env: KIZUNA_DATA_DIR. Default: ./kizuna-data.")
    var dataDirectory: String?

    @Option(name: .customLong("database-url"), help: "A postgres:// URL; use PostgreSQL instead of SQLite. Env: KIZUNA_DATABASE_URL.")
    var databaseURL: String?

    func location(_ environment: Environment) throws -> DatabaseLocation {
        do {
            return try DatabaseLocation.resolve(
                databaseURL: databaseURL ?? environment["KIZUNA_DATABASE_URL"],
                dataDirectory: dataDirectory ?? environment["KIZUNA_DATA_DIR"] ?? "./kizuna-data"
            )
        } catch {
            throw ValidationError(error.message)
        }
    }
}

/// How to reach a running server, for commands that use the admin API.
struct ServerOptions: ParsableArguments {
    @Option(help: "Base URL of the Kizuna server. Env: KIZUNA_SERVER. Default: http://127.0.0.1:8080.")
    var server: String?

    @Option(help: "Admin token (kza_…). Env: KIZUNA_TOKEN.")
    var token: String?

    /// - Parameter requireToken: `false` for device routes (`gate check`), which need no admin token.
    func client(_ environment: Environment, requireToken: Bool = true) throws -> AdminClient {
        let base = server ?? environment["KIZUNA_SERVER"] ?? "http://127.0.0.1:8080"
        guard let url = URL(string: base), let scheme = url.scheme, ["http", "https"].contains(scheme.lowercased()), url.host != nil else {
            throw ValidationError("--server must be an http:// or https:// URL, got '\(base)'.")
        }
        guard let token = token ?? environment["KIZUNA_TOKEN"] ?? (requireToken ? nil : "") else {
            throw ValidationError("An admin token is needed: pass --token or set KIZUNA_TOKEN.")
        }
        return AdminClient(server: url, token: token)
    }
}

/// `--json` for output a script reads.
struct OutputOptions: ParsableArguments {
    @Flag(help: "Print JSON instead of text.")
    var json = false

    func printJSON(_ value: some Encodable) throws {
        print(try Self.jsonText(value))
    }

    /// `value` as the CLI prints JSON: the wire format, indented, keys sorted.
    static func jsonText(_ value: some Encodable) throws -> String {
        let encoder = WireFormat.encoder()
        encoder.outputFormatting.formUnion([.prettyPrinted, .sortedKeys])
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// Sends logs to standard error at `level`, once per process; `buffered` (the server's) collects `info` and quieter
/// lines for up to 100 ms (``BufferedStandardError``).
func bootstrapLogging(level: Logger.Level, buffered: Bool = false) {
    LoggingSystem.bootstrap { label in
        if buffered { return ServerLogHandler(label: label, level: level, metadataProvider: LoggingSystem.metadataProvider) }
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = level
        return handler
    }
}

/// Standard error as a `print(_:to:)` target.
struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        FileHandle.standardError.write(Data(string.utf8))
    }
}

/// Opens the store, runs `body`, and closes the store whether it succeeded or not.
func withStore<R>(_ store: StoreOptions, _ body: (KizunaDatabase) async throws -> R) async throws -> R {
    bootstrapLogging(level: .warning)
    let database = try KizunaDatabase(location: try store.location(.process))
    do {
        let result = try await body(database)
        await database.shutdown()
        return result
    } catch {
        await database.shutdown()
        throw error
    }
}
