import ArgumentParser
import Foundation
import KizunaServer
import Logging
import Testing

@testable import kizuna

@Suite("CLI parsing")
struct CommandParsingTests {
    @Test func serveDefaults() throws {
        let command = try #require(try Kizuna.parseAsRoot(["serve"]) as? ServeCommand)
        let configuration = try command.configuration(Environment(values: [:]))
        #expect(configuration.host == "127.0.0.1" && configuration.port == 8080 && configuration.maxBodySize == 1 << 20)
        #expect(configuration.database == .sqlite(dataDirectory: "./kizuna-data"))
        #expect(configuration.logLevel == .info)
        #expect(configuration.documentRetention == 300 && configuration.deviceRateLimit == .default)
    }

    @Test func publishingAndThrottlingSettings() throws {
        let environment = Environment(values: ["KIZUNA_CONFIG_RETENTION": "50", "KIZUNA_DEVICE_RATE_LIMIT": "600"])
        let fromEnvironment = try (try Kizuna.parseAsRoot(["serve"]) as! ServeCommand).configuration(environment)
        #expect(fromEnvironment.documentRetention == 50 && fromEnvironment.deviceRateLimit == DeviceRateLimit(perMinute: 600, burst: 300))
        let flags = try Kizuna.parseAsRoot(["serve", "--device-rate-limit", "1000000"]) as! ServeCommand
        #expect(try flags.configuration(environment).deviceRateLimit.perMinute == 1_000_000)
        let bad = try Kizuna.parseAsRoot(["serve", "--config-retention", "0"]) as! ServeCommand
        #expect { try bad.configuration(environment) } throws: { "\($0)".contains("KIZUNA_CONFIG_RETENTION") }
    }

    @Test func graphQLLimitsComeFromFlagsThenEnvironmentThenDefaults() throws {
        func limits(_ arguments: [String], _ environment: [String: String] = [:]) throws -> GraphQLLimits {
            try (try Kizuna.parseAsRoot(["serve"] + arguments) as! ServeCommand).configuration(Environment(values: environment)).graphQLLimits
        }
        #expect(try limits([]) == GraphQLLimits())
        let environment = [
            "KIZUNA_GRAPHQL_MAX_DEPTH": "12", "KIZUNA_GRAPHQL_MAX_COST": "1000", "KIZUNA_GRAPHQL_MAX_ALIASES": "5",
            "KIZUNA_GRAPHQL_MAX_MUTATIONS": "50", "KIZUNA_GRAPHQL_MAX_DOCUMENT_SIZE": "4096",
        ]
        let fromEnvironment = try limits([], environment)
        #expect(fromEnvironment.maximumDepth == 12 && fromEnvironment.maximumCost == 1000 && fromEnvironment.maximumAliases == 5)
        #expect(fromEnvironment.maximumMutationsPerRequest == 50 && fromEnvironment.maximumDocumentBytes == 4096)
        let fromFlags = try limits(
            [
                "--graphql-max-depth", "8", "--graphql-max-cost", "200000", "--graphql-max-aliases", "0", "--graphql-max-mutations", "1",
                "--graphql-max-document-size", "1024",
            ], environment)
        #expect(fromFlags.maximumDepth == 8 && fromFlags.maximumCost == 200_000 && fromFlags.maximumAliases == 0)
        #expect(fromFlags.maximumMutationsPerRequest == 1 && fromFlags.maximumDocumentBytes == 1024)
        #expect { try limits(["--graphql-max-depth", "0"]) } throws: { "\($0)".contains("KIZUNA_GRAPHQL_MAX_DEPTH") }
        #expect { try limits([], ["KIZUNA_GRAPHQL_MAX_COST": "lots"]) } throws: { "\($0)".contains("KIZUNA_GRAPHQL_MAX_COST") }
        #expect(Kizuna.helpMessage(for: ServeCommand.self).contains("--graphql-max-cost"))
    }

    @Test func webSettingsPickTheCookieFromThePublicURL() throws {
        func web(_ arguments: [String], _ environment: [String: String] = [:]) throws -> WebSettings {
            try (try Kizuna.parseAsRoot(["serve"] + arguments) as! ServeCommand).configuration(Environment(values: environment)).effectiveWeb
        }
        #expect(try web([]).cookieMode == .loopbackDevelopment)
        #expect(try web(["--host", "0.0.0.0"]).cookieMode == .secure)
        let production = try web(["--host", "0.0.0.0"], ["KIZUNA_PUBLIC_URL": "https://example.com", "KIZUNA_TRUST_FORWARDED_FOR": "1"])
        #expect(production.cookieMode == .secure && production.publicURL?.absoluteString == "https://example.com" && production.trustForwardedFor)
        #expect(try web(["--public-url", "http://localhost:8080"]).cookieMode == .loopbackDevelopment)
        #expect(try web(["--public-url", "http://example.com"]).cookieMode == .secure)
        #expect { try web(["--public-url", "https://example.com/app"]) } throws: { "\($0)".contains("KIZUNA_PUBLIC_URL") }
    }

    @Test func flagsBeatEnvironmentWhichBeatsDefaults() throws {
        let environment = Environment(values: [
            "KIZUNA_HOST": "0.0.0.0", "KIZUNA_PORT": "9000", "KIZUNA_DATA_DIR": "/env/data", "KIZUNA_LOG_LEVEL": "debug",
            "KIZUNA_DATABASE_URL": "postgres://env@db/kizuna",
        ])
        let fromEnvironment = try (try Kizuna.parseAsRoot(["serve"]) as! ServeCommand).configuration(environment)
        #expect(fromEnvironment.host == "0.0.0.0" && fromEnvironment.port == 9000 && fromEnvironment.logLevel == .debug)
        #expect(fromEnvironment.database == .postgres(url: "postgres://env@db/kizuna"))

        let flags = try Kizuna.parseAsRoot(["serve", "--port", "7000", "--database-url", "postgresql://flag@db/k", "--log-level", "error"])
        let fromFlags = try (flags as! ServeCommand).configuration(environment)
        #expect(fromFlags.port == 7000 && fromFlags.host == "0.0.0.0" && fromFlags.logLevel == .error)
        #expect(fromFlags.database == .postgres(url: "postgresql://flag@db/k"))

        let dataDir = try (try Kizuna.parseAsRoot(["serve", "--data-dir", "/flag"]) as! ServeCommand).configuration(Environment(values: [:]))
        #expect(dataDir.database == .sqlite(dataDirectory: "/flag"))
    }

    @Test func badSettingsNameWhatIsWrong() throws {
        let serve = try Kizuna.parseAsRoot(["serve", "--database-url", "mysql://x"]) as! ServeCommand
        #expect { try serve.configuration(Environment(values: [:])) } throws: { "\($0)".contains("postgres://") }
        let port = try Kizuna.parseAsRoot(["serve"]) as! ServeCommand
        #expect { try port.configuration(Environment(values: ["KIZUNA_PORT": "eighty"])) } throws: { "\($0)".contains("KIZUNA_PORT") }
        #expect(throws: (any Error).self) { try Kizuna.parseAsRoot(["migrate", "--batch-size", "0"]) }
        #expect(throws: (any Error).self) { try Kizuna.parseAsRoot(["app", "add", "--id", "x"]) }
        #expect(throws: (any Error).self) {
            try Kizuna.parseAsRoot(["app", "add", "--id", "x", "--name", "X", "--platform", "symbian", "--bundle-id", "a.b"])
        }
    }

    @Test func serverCommandsNeedAToken() throws {
        let list = try Kizuna.parseAsRoot(["app", "list", "--server", "http://127.0.0.1:1"]) as! AppCommand.List
        #expect { try list.server.client(Environment(values: [:])) } throws: { "\($0)".contains("KIZUNA_TOKEN") }
        _ = try list.server.client(Environment(values: ["KIZUNA_TOKEN": "kza_x"]))
        let badServer = try Kizuna.parseAsRoot(["app", "list", "--server", "ftp://x"]) as! AppCommand.List
        #expect { try badServer.server.client(Environment(values: ["KIZUNA_TOKEN": "t"])) } throws: { "\($0)".contains("--server") }
    }
}
