import Foundation
import Logging

/// Where the server's secret key comes from.
public enum SecretKeySetting: Sendable, Hashable {
    /// 64 hex digits or the base64 of 32 bytes (`KIZUNA_SECRET_KEY`).
    case text(String)
    /// A file of 32 bytes, created with random ones (mode 0600) when absent (`--secret-key-file`).
    case file(String)
}

/// Everything `kizuna serve` can be told. The CLI fills it from flags, then `KIZUNA_*` variables, then defaults.
public struct KizunaConfiguration: Sendable {
    /// Address to listen on.
    public var host: String
    /// Port to listen on; 0 picks a free one.
    public var port: Int
    /// Where the store lives.
    public var database: DatabaseLocation
    /// Largest request body accepted, in bytes.
    public var maxBodySize: Int
    /// Rows per transaction when a data migration runs at start, and per batch when a schema job fills a new
    /// field's default into existing records.
    public var migrationBatchSize: Int
    /// Log level of the server's loggers.
    public var logLevel: Logger.Level
    /// Told the plaintext of the admin token created on first start of an empty store. Prints it by default.
    public var announceAdminToken: @Sendable (AdminCredential) -> Void
    /// Published versions kept per app for each config template and gate policy; older ones are deleted.
    public var documentRetention: Int
    /// How often one install may call `config:fetch` and `gate:check`.
    public var deviceRateLimit: DeviceRateLimit
    /// Whether `config:fetch` and `gate:check` are answered in the connection's pipeline when everything they need is
    /// in memory (``DeviceFastLane``); the same answers either way. Off only to compare the two paths.
    package var deviceFastLane = true
    /// How often an idle event stream sends a keep-alive comment.
    public var eventKeepAlive: Duration = .seconds(25)
    /// Lifetimes of sessions, handoff codes and reset tokens.
    public var sessions: SessionPolicy = .default
    /// Locks after failed sign-ins.
    public var signInThrottle: SignInThrottlePolicy = .default
    /// The site's public URL, the session cookie's mode and proxy trust; by default derived from ``host``
    /// (see ``WebSettings/derived(host:publicURL:trustForwardedFor:)``).
    public var web: WebSettings?
    /// Password checks (sign-in, sign-up, password changes) running or waiting at once; more are answered 503 with
    /// `Retry-After` instead of queueing without limit behind a flood.
    public var maxPendingPasswordChecks: Int = 16
    /// Stop waiting for a connection that has sent nothing — no request, or not the rest of a request's header or
    /// body — for this long; an idle keep-alive connection is closed after it too.
    public var idleTimeout: Duration = .seconds(60)
    /// How long a connection may stay open once the server starts shutting down (a request finishing, a WebSocket's
    /// close handshake); then it is closed whatever its peer does, so that no peer can hold a shutdown forever.
    public var shutdownGrace: Duration = .seconds(10)
    /// Connections open at once; more are closed as they arrive, with a warning in the log.
    public var maxConnections: Int = 10_000
    /// Origins (`https://app.example.com`) whose web pages may call the device and account API from a browser. None
    /// by default: native apps need no CORS.
    public var corsOrigins: [String] = []
    /// How long a request waits for a free store connection before it fails (tests, running dozens of servers on two
    /// cores, wait longer).
    package var databaseConnectionWait: Duration = .seconds(10)
    /// scrypt's cost for new password hashes (tests lower it to run faster).
    package var passwordParameters: PasswordHasher.Parameters = .standard
    /// How often the change feed reads the log without being woken: the most a lost notification delays an event.
    package var changePollInterval: Duration = .seconds(5)
    /// How long deleted data records are kept as tombstones for offline clients' syncs, in days.
    public var tombstoneRetentionDays: Int = 30
    /// How long the `changes` log keeps a change, in days (the tombstone retention when `nil`): how far back a
    /// subscription may resume with `since` before it is told `sync_expired`.
    public var changeRetentionDays: Int?
    /// Limits on data API (GraphQL) requests: depth, aliases, cost, mutations per request, document size.
    package var graphQLLimits = GraphQLLimits()
    /// How the schema jobs a data schema publish leaves (index builds, backfills) are run.
    package var dataJobs = DataJobSettings()
    /// Timers and limits of the data API's WebSocket (graphql-transport-ws) connections.
    package var graphQLWS = GraphQLWSSettings()
    /// Where APNs is and how pushes are sent.
    public var push = PushSettings()
    /// The key secrets are sealed with at rest (APNs signing keys): `KIZUNA_SECRET_KEY`'s text or a key file. By
    /// default `secret.key` in an SQLite store's data directory, created on first use; a PostgreSQL store has none
    /// until given one (every instance sharing it needs the same).
    public var secretKey: SecretKeySetting?

    /// Where release artifacts are kept: a directory (`blobs/` beside an SQLite store by default; with PostgreSQL
    /// every instance must see the same files, such as a shared volume) or an S3-compatible bucket.
    public var blobStorage: BlobStorage?
    /// The largest release artifact accepted, in bytes: 20 GiB.
    public var maxArtifactSize: Int64 = 20 * 1024 * 1024 * 1024

    /// Where signed gate mirrors are written (`<directory>/<app>/gate.json`), for a static host or CDN to serve
    /// when the API is down; none when `nil`.
    public var mirrorDirectory: String?
    /// The file of the mirrors' Ed25519 signing key (a 32-byte seed, created when absent), for rotating it; `nil`
    /// derives the key from the secret key.
    public var mirrorKeyFile: String?

    /// The blob storage: ``blobStorage``, else `blobs` beside an SQLite store, else `kizuna-blobs` in the working
    /// directory.
    var effectiveBlobStorage: BlobStorage {
        if let blobStorage { return blobStorage }
        if case .sqlite(let path) = database {
            return .directory(((path as NSString).deletingLastPathComponent as NSString).appendingPathComponent("blobs"))
        }
        return .directory("kizuna-blobs")
    }

    /// The source of the secret key, as ``secretKey`` and the store say.
    var secretKeyOrigin: SecretKeySource.Origin {
        switch (secretKey, database) {
        case (.text(let text)?, _): .text(text)
        case (.file(let path)?, _): .file(path)
        case (nil, .sqlite(let path)): .file(((path as NSString).deletingLastPathComponent as NSString).appendingPathComponent("secret.key"))
        case (nil, .postgres): .unset
        }
    }

    /// The largest message a WebSocket client may send: ``GraphQLWSSettings/maxMessageBytes``, or the body limit.
    package var graphQLWSMaxMessageBytes: Int { graphQLWS.maxMessageBytes ?? maxBodySize }
    /// The migration steps to apply; Kizuna's own unless a test supplies others.
    package var migrations: [MigrationStep]
    /// Where the server's loggers write (by label); the process's logging system when `nil`. Tests keep what a server
    /// logged, to say where it stalled.
    package var logHandler: (@Sendable (String) -> any LogHandler)?

    /// The web settings in force: ``web``, or those derived from ``host``.
    public var effectiveWeb: WebSettings { web ?? .derived(host: host, publicURL: nil) }

    /// Creates a configuration.
    /// - Parameters:
    ///   - host: Address to listen on (default `127.0.0.1`).
    ///   - port: Port (default 8080).
    ///   - database: The store (default SQLite in `./kizuna-data`).
    ///   - maxBodySize: Body limit in bytes (default 1 MiB).
    ///   - migrationBatchSize: Rows per data-migration transaction and per schema backfill batch (default 1000).
    ///   - logLevel: Log level (default `info`).
    ///   - documentRetention: Versions kept per template or policy (default 300).
    ///   - deviceRateLimit: Per-install limit on device endpoints (default 60 a minute, bursts of 30).
    ///   - announceAdminToken: Receives the first admin token of an empty store.
    public init(
        host: String = "127.0.0.1",
        port: Int = 8080,
        database: DatabaseLocation = .sqlite(dataDirectory: "./kizuna-data"),
        maxBodySize: Int = 1 << 20,
        migrationBatchSize: Int = 1000,
        logLevel: Logger.Level = .info,
        documentRetention: Int = 300,
        deviceRateLimit: DeviceRateLimit = .default,
        announceAdminToken: @escaping @Sendable (AdminCredential) -> Void = KizunaConfiguration.printAdminToken
    ) {
        self.host = host
        self.port = port
        self.database = database
        self.maxBodySize = maxBodySize
        self.migrationBatchSize = migrationBatchSize
        self.logLevel = logLevel
        self.documentRetention = documentRetention
        self.deviceRateLimit = deviceRateLimit
        self.announceAdminToken = announceAdminToken
        self.migrations = CoreMigrations.all
    }

    /// Prints the first admin token to standard output, once, with how to use it.
    public static let printAdminToken: @Sendable (AdminCredential) -> Void = { credential in
        // Written unbuffered: when standard output is a file or pipe, a buffered print would sit unseen.
        FileHandle.standardOutput.write(
            Data(
                """

                ========================================================================
                 Kizuna created an admin token for this new store. It is shown once;
                 only its hash is kept. Store it in your password manager:

                   \(credential.token)

                 Use it with:  export KIZUNA_TOKEN=\(credential.token)
                 or sign in with it to the admin console at /console.
                 More tokens:  kizuna admin token create --name <what-for>
                ========================================================================


                """.utf8))
    }

    /// What the package's tests run their servers with, where dozens share two cores: scrypt at N = 2^10 (a
    /// millisecond) instead of 2^15, so a suite signing up dozens of users does not queue hashes past its clients'
    /// timeouts; and a minute's wait for a store connection instead of ten seconds, so a server slow to get one among
    /// dozens does not fail a test for the wrong reason.
    package mutating func useTestSettings() {
        passwordParameters = .init(logN: 10, r: 8, p: 1)
        databaseConnectionWait = .seconds(60)
    }
}
