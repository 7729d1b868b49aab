import ArgumentParser
import Foundation
import KizunaServer
import Logging

struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the Kizuna server.",
        discussion: """
            With no options it serves http://127.0.0.1:8080 from an SQLite store in ./kizuna-data, created on first \
            start. On the first start of an empty store it prints a one-time admin token: use it with the CLI, the \
            admin API, or to sign in to the admin console at /console. Pending migrations run in \
            the background: /health/live answers at once, /health/ready and the API answer 503 until they finish. \
            SIGINT or SIGTERM drain in-flight requests and close the store.
            """
    )

    @Option(help: "Address to listen on. Env: KIZUNA_HOST. Default: 127.0.0.1.")
    var host: String?

    @Option(help: "Port to listen on. Env: KIZUNA_PORT. Default: 8080.")
    var port: Int?

    @OptionGroup var store: StoreOptions

    @Option(name: .customLong("max-body-size"), help: "Largest request body in bytes. Env: KIZUNA_MAX_BODY_SIZE. Default: 1048576.")
    var maxBodySize: Int?

    @Option(
        name: .customLong("config-retention"),
        help: "Published versions kept per config template and per gate policy. Env: KIZUNA_CONFIG_RETENTION. Default: 300."
    )
    var configRetention: Int?

    @Option(
        name: .customLong("device-rate-limit"),
        help: """
            Requests a minute one install may make to config:fetch and gate:check; bursts of half that pass. \
            Env: KIZUNA_DEVICE_RATE_LIMIT. Default: 60.
            """
    )
    var deviceRateLimit: Int?

    @Option(
        name: .customLong("public-url"),
        help: """
            The site's public origin, such as https://example.com: absolute handoff and reset links, and the Origin \
            form posts must come from. Plain http:// on a loopback host (or no URL while listening on loopback) uses \
            the development cookie kizuna_session without Secure; anything else __Host-kizuna_session. \
            Env: KIZUNA_PUBLIC_URL.
            """
    )
    var publicURL: String?

    @Flag(
        name: .customLong("trust-forwarded-for"),
        help: "Throttle sign-ins by the last X-Forwarded-For address (only behind a proxy that sets it). Env: KIZUNA_TRUST_FORWARDED_FOR=1."
    )
    var trustForwardedFor = false

    @Option(
        name: .customLong("idle-timeout"),
        help: """
            Seconds a connection may send nothing — no request, or not the rest of one — before it is closed; idle \
            keep-alive connections close after it too. Env: KIZUNA_IDLE_TIMEOUT. Default: 60.
            """
    )
    var idleTimeout: Int?

    @Option(
        name: .customLong("max-connections"),
        help: """
            Connections open at once; more are closed as they arrive, with a warning. At most the open-file limit (raised \
            to its hard limit at start) less 256. Env: KIZUNA_MAX_CONNECTIONS. Default: 10000.
            """
    )
    var maxConnections: Int?

    @Option(
        name: .customLong("cors-origin"),
        help: """
            An origin (https://app.example.com) whose web pages may call the device and account API from a browser; \
            repeat for several. Never the admin API. Env: KIZUNA_CORS_ORIGINS, comma-separated. Default: none.
            """
    )
    var corsOrigins: [String] = []

    @Option(
        name: .customLong("refresh-reuse-grace"),
        help: """
            Seconds after a session refresh in which the same install may present the exchanged refresh token again \
            and get the same new tokens (its answer was lost); any other reuse signs the session out. \
            Env: KIZUNA_REFRESH_REUSE_GRACE. Default: 30.
            """
    )
    var refreshReuseGrace: Int?

    @Option(
        name: .customLong("max-pending-password-checks"),
        help: """
            Password checks (sign-in, sign-up, password changes) running or waiting at once; more are answered 503 with \
            Retry-After. Env: KIZUNA_MAX_PENDING_PASSWORD_CHECKS. Default: 16.
            """
    )
    var maxPendingPasswordChecks: Int?

    @OptionGroup(title: "GraphQL limits")
    var graphQL: GraphQLLimitOptions

    @OptionGroup(title: "Realtime (WebSocket subscriptions and the change log)")
    var realtime: RealtimeOptions

    @OptionGroup(title: "Push (APNs)")
    var push: PushOptions

    @OptionGroup(title: "Gate mirrors")
    var mirror: MirrorOptions

    @OptionGroup(title: "Blob storage (release artifacts)")
    var blobs: BlobStorageOptions
    @Option(
        name: .customLong("batch-size"),
        help: """
            Rows per transaction when a data migration runs at start and when a schema job fills a default into existing \
            records. Env: KIZUNA_BATCH_SIZE. Default: 1000.
            """
    )
    var batchSize: Int?

    @Option(
        name: .customLong("log-level"),
        help:
            "trace, debug, info, notice, warning, error or critical; info and quieter lines are written at least every 100 ms. Env: KIZUNA_LOG_LEVEL. Default: info."
    )
    var logLevel: Logger.Level?

    func configuration(_ environment: Environment) throws -> KizunaConfiguration {
        func integer(_ flag: Int?, _ key: String, _ fallback: Int, range: ClosedRange<Int>) throws -> Int {
            try environment.integer(flag, key, fallback, range: range)
        }
        func rateLimit() throws -> DeviceRateLimit {
            let perMinute = try integer(deviceRateLimit, "KIZUNA_DEVICE_RATE_LIMIT", 60, range: 1...10_000_000)
            return DeviceRateLimit(perMinute: Double(perMinute), burst: Double(max(1, perMinute / 2)))
        }
        let level: Logger.Level
        if let logLevel {
            level = logLevel
        } else if let text = environment["KIZUNA_LOG_LEVEL"] {
            guard let parsed = Logger.Level(rawValue: text) else { throw ValidationError("KIZUNA_LOG_LEVEL '\(text)' is not a log level.") }
            level = parsed
        } else {
            level = .info
        }
        let host = host ?? environment["KIZUNA_HOST"] ?? "127.0.0.1"
        var publicURL: URL?
        if let text = self.publicURL ?? environment["KIZUNA_PUBLIC_URL"] {
            guard let url = URL(string: text), url.scheme == "https" || url.scheme == "http", url.host != nil, url.path.isEmpty || url.path == "/"
            else {
                throw ValidationError("KIZUNA_PUBLIC_URL must be an origin such as https://example.com, got '\(text)'.")
            }
            publicURL = url
        }
        var configuration = KizunaConfiguration(
            host: host,
            port: try integer(port, "KIZUNA_PORT", 8080, range: 0...65535),
            database: try store.location(environment),
            maxBodySize: try integer(maxBodySize, "KIZUNA_MAX_BODY_SIZE", 1 << 20, range: 1024...(1 << 30)),
            migrationBatchSize: try integer(batchSize, "KIZUNA_BATCH_SIZE", 1000, range: 1...1_000_000),
            logLevel: level,
            documentRetention: try integer(configRetention, "KIZUNA_CONFIG_RETENTION", 300, range: 1...100_000),
            deviceRateLimit: try rateLimit()
        )
        configuration.idleTimeout = .seconds(try integer(idleTimeout, "KIZUNA_IDLE_TIMEOUT", 60, range: 1...86_400))
        configuration.maxConnections = try integer(maxConnections, "KIZUNA_MAX_CONNECTIONS", 10_000, range: 1...1_000_000)
        configuration.maxPendingPasswordChecks = try integer(
            maxPendingPasswordChecks, "KIZUNA_MAX_PENDING_PASSWORD_CHECKS", 16, range: 1...10_000)
        configuration.graphQLLimits = try graphQL.limits(environment)
        try realtime.apply(to: &configuration, environment)
        try push.apply(to: &configuration, environment)
        mirror.apply(to: &configuration, environment)
        try blobs.apply(to: &configuration, environment)
        configuration.sessions.refreshReuseGrace = .seconds(try integer(refreshReuseGrace, "KIZUNA_REFRESH_REUSE_GRACE", 30, range: 0...600))
        let origins =
            corsOrigins.isEmpty
            ? (environment["KIZUNA_CORS_ORIGINS"] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } : corsOrigins
        for origin in origins where !origin.isEmpty {
            guard let url = URL(string: origin), url.scheme == "https" || url.scheme == "http", url.host != nil, url.path.isEmpty, url.query == nil
            else {
                throw ValidationError("--cors-origin must be an origin such as https://app.example.com (no path), got '\(origin)'.")
            }
            configuration.corsOrigins.append(origin)
        }
        let trustProxy = trustForwardedFor || ["1", "true", "yes"].contains(environment["KIZUNA_TRUST_FORWARDED_FOR"]?.lowercased() ?? "")
        configuration.web = .derived(host: host, publicURL: publicURL, trustForwardedFor: trustProxy)
        return configuration
    }

    func run() async throws {
        let configuration = try configuration(.process)
        bootstrapLogging(level: configuration.logLevel, buffered: true)
        EventLoopGlobalExecutor.install()
        try await runServer(configuration: configuration)
    }
}
