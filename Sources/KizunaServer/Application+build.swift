import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import KizunaCore
import Logging
import NIOCore

/// Builds the Kizuna server: routes, middleware, store and background services.
///
/// The store is opened but not migrated here; pending steps run in the background once the application runs, while
/// `/health/live` already answers. A store written by a newer Kizuna is refused before anything touches it.
/// - Parameter configuration: What to serve and where the store lives.
/// - Throws: `store_too_new`, or an error opening the store.
public func buildApplication(configuration: KizunaConfiguration) async throws -> some ApplicationProtocol {
    try await ServerParts(configuration: configuration).application()
}

/// The pieces ``buildApplication(configuration:)`` assembles, also used by tests.
struct ServerParts {
    let logger: Logger
    let database: KizunaDatabase
    let readiness: Readiness
    let router: Router<KizunaRequestContext>
    /// The routes a WebSocket upgrade may take: the data API's graphql-transport-ws.
    let webSocketRouter: Router<WebSocketUpgradeContext>
    let startup: StartupService
    let feed: ChangeFeed
    /// Hands data changes to the graphql-transport-ws connections.
    let hub: SubscriptionHub
    /// Deletes expired data tombstones.
    let sweeper: TombstoneSweeper
    /// Discards release uploads left unfinished for a week.
    let uploadsExpiry: ReleaseUploadsExpiry
    /// Builds indexes and fills defaults that data schema publishes leave for later.
    let jobs: DataJobRunner
    /// Sends push jobs to APNs.
    let pushSender: PushSender
    /// The apple-app-site-association file as served.
    package let associationFile: AssociationFile
    /// Signed static copies of the gate policies.
    package let mirrors: GateMirrors
    let configuration: KizunaConfiguration
    /// Answers `config:fetch` and `gate:check` in the channel pipeline when it can (nil: switched off).
    let deviceLane: DeviceFastLane?
    /// Held while an SQLite store is served, so a second server on the same data directory is refused.
    let storeLock: StoreLock?

    init(configuration: KizunaConfiguration) async throws {
        MetricsExporter.bootstrap()
        self.configuration = configuration
        func makeLogger(_ label: String) -> Logger {
            var logger = configuration.logHandler.map { factory in Logger(label: label, factory: factory) } ?? Logger(label: label)
            logger.logLevel = configuration.logLevel
            return logger
        }
        let logger = makeLogger("kizuna")
        self.logger = logger
        let databaseLogger = makeLogger("kizuna.db")
        if case .sqlite(let path) = configuration.database {
            // Taken before the store is opened, so the second server touches nothing.
            try KizunaDatabase.prepareSQLiteFile(path, logger: nil)  // the store warns when it opens
            storeLock = try StoreLock(store: path)
        } else {
            storeLock = nil
        }
        database = try KizunaDatabase(
            location: configuration.database, connectionWait: configuration.databaseConnectionWait, logger: databaseLogger)
        let runner = MigrationRunner(database: database, steps: configuration.migrations, logger: logger)
        do {
            _ = try await runner.status()  // refuses a newer store before anything writes to it
        } catch {
            await database.shutdown()
            throw error
        }
        readiness = Readiness()
        let tokens = AdminTokenSQLRepository(database: database)
        startup = StartupService(
            runner: runner,
            firstToken: FirstAdminToken(tokens: tokens, announce: configuration.announceAdminToken, logger: logger),
            readiness: readiness,
            batchSize: configuration.migrationBatchSize,
            logger: logger
        )

        router = Router(context: KizunaRequestContext.self)
        let allowedMethods = AllowedMethods()
        let metrics = RequestMetrics()
        let edge = EdgeMiddleware(
            metrics: metrics, errors: ErrorResponder(allowedMethods: allowedMethods), readiness: ReadinessGate(readiness: readiness),
            // Release artifacts stream to the blob store under their own limit.
            bodyLimit: BodyLimit(limit: configuration.maxBodySize, streams: ReleasesController.isArtifactUpload))
        if configuration.corsOrigins.isEmpty {
            router.add(middleware: edge)
        } else {
            // Between the edge's halves, so error answers carry CORS headers too (a browser hides them otherwise).
            router.add(middleware: edge.only(.outside))
            router.add(middleware: AllowedOriginsMiddleware(origins: configuration.corsOrigins))
            router.add(middleware: edge.only(.inside))
        }

        let feed = ChangeFeed(database: database, readiness: readiness, logger: logger, pollInterval: configuration.changePollInterval)
        self.feed = feed
        let hub = SubscriptionHub(feed: feed, buffer: configuration.graphQLWS.hubBuffer, logger: logger)
        self.hub = hub
        let jobs = DataJobRunner(
            database: database, readiness: readiness, feed: feed, batchSize: configuration.migrationBatchSize, settings: configuration.dataJobs,
            logger: logger)
        self.jobs = jobs
        let associatedDomainSettings = AssociatedDomainSQLRepository(database: database, didCommit: feed.poke)
        let associationFile = AssociationFile(feed: feed)
        self.associationFile = associationFile
        // Every app change is checked against the apple-app-site-association file it leads to, in its transaction,
        // and rebuilds the served file.
        let appRepository = AppSQLRepository(
            database: database,
            didCommit: {
                feed.poke()
                associationFile.invalidate()
            },
            checkChange: { db in try await associatedDomainSettings.checkAppChange(on: db) { try AssociatedDomainStore.check($0) } },
            willDelete: { app, db in try await DataTables.dropTables(app: app, on: db) })
        let associatedDomainStore = AssociatedDomainStore(apps: appRepository, repository: associatedDomainSettings)
        associationFile.use(associatedDomainStore)
        let documents = DocumentSQLRepository(database: database, didCommit: feed.poke)
        let live = LiveDocuments(apps: appRepository, documents: documents, feed: feed)
        let secretKey = SecretKeySource(configuration.secretKeyOrigin)
        let mirrors = GateMirrors(
            live: live, apps: appRepository,
            signingKey: MirrorSigningKey(configuration.mirrorKeyFile.map(MirrorSigningKey.Origin.file) ?? .derived(secretKey)),
            directory: configuration.mirrorDirectory, feed: feed, readiness: readiness, logger: logger)
        self.mirrors = mirrors
        let apiKeys = APIKeySQLRepository(database: database)
        let userGroups = UserGroupSQLRepository(database: database)
        let tombstoneRetention = Int64(configuration.tombstoneRetentionDays) * 86_400_000
        let dataSchemas = LiveDataSchemas(
            apps: appRepository, documents: documents, database: database, secrets: ServerSecrets(database: database), feed: feed,
            tombstoneRetention: tombstoneRetention)
        sweeper = TombstoneSweeper(
            apps: appRepository, schemas: dataSchemas, database: database, readiness: readiness, retention: tombstoneRetention,
            changeRetention: Int64(configuration.changeRetentionDays ?? configuration.tombstoneRetentionDays) * 86_400_000, interval: .seconds(3600),
            logger: logger)

        let root = router.group()
        let v1 = router.group("/v1")
        let admin = router.group("/v1/admin").add(middleware: AdminAuthMiddleware(tokens: tokens))
        OperationsController(readiness: readiness, database: database).addRoutes(to: root)
        let blobs = try configuration.effectiveBlobStorage.store()
        let releases = ReleaseStore(database: database, blobs: blobs)
        // Removing an app removes its releases' rows by cascade; their bytes go once it has.
        let apps = AppsController(repository: appRepository, onDelete: { app in try await releases.bytesToDiscard(app: app) })
        apps.addPublicRoutes(to: v1)
        apps.addAdminRoutes(to: admin)
        PublishingController(
            documents: documents, live: live, dataSchemas: dataSchemas, apps: appRepository, mirrors: mirrors,
            retention: configuration.documentRetention
        ).addRoutes(to: admin)
        let installLimiter = InstallRateLimiter(limit: configuration.deviceRateLimit)
        let devices = DeviceController(live: live, limiter: installLimiter)
        devices.addRoutes(to: v1)
        deviceLane =
            configuration.deviceFastLane
            ? DeviceFastLane(
                devices: devices, readiness: readiness, metrics: metrics, logger: logger, bodyLimit: configuration.maxBodySize,
                serverName: Self.serverName, idleTimeout: TimeAmount(configuration.idleTimeout)) : nil
        APIKeysController(keys: apiKeys).addAdminRoutes(to: admin)
        EventStreamController(feed: feed, live: live, keepAliveInterval: configuration.eventKeepAlive)
            .addRoutes(to: v1)

        let web = configuration.effectiveWeb
        let signInThrottle = SignInThrottle(repository: SignInThrottleSQLRepository(database: database), policy: configuration.signInThrottle)
        let accounts = AccountService(
            repository: AccountSQLRepository(database: database, didCommit: feed.poke),
            apps: appRepository,
            hasher: PasswordHasher(parameters: configuration.passwordParameters, maxPending: configuration.maxPendingPasswordChecks),
            sessions: configuration.sessions,
            throttle: signInThrottle,
            logger: logger)
        AccountsController(accounts: accounts, web: web).addRoutes(to: v1)
        let pushDevices = PushDeviceRepository(database: database)
        PushDevicesController(devices: pushDevices, apps: appRepository, accounts: accounts, limiter: installLimiter).addRoutes(to: v1)
        let pushCredentials = PushCredentialStore(database: database, secretKey: secretKey)
        let pushJobs = PushJobStore(database: database)
        let pushTokens = APNsProviderTokens(now: { [now = configuration.push.now] in EpochMillis.date(now()) }, shared: pushCredentials.sharedTokens)
        let pushSender = PushSender(
            jobs: pushJobs, credentials: pushCredentials, client: try APNsClient(settings: configuration.push, tokens: pushTokens),
            readiness: readiness,
            logger: logger)
        self.pushSender = pushSender
        PushAdminController(credentials: pushCredentials, devices: pushDevices, jobs: pushJobs, sender: pushSender, apps: appRepository)
            .addRoutes(to: admin)
        UsersController(accounts: accounts, groups: userGroups, web: web).addRoutes(to: admin)
        let graphQL = GraphQLExecutor(limits: configuration.graphQLLimits)
        let callers = DataCallers(accounts: accounts, groups: userGroups, keys: apiKeys)
        GraphQLController(schemas: dataSchemas, callers: callers, executor: graphQL).addRoutes(to: v1)
        webSocketRouter = Router(context: WebSocketUpgradeContext.self)
        GraphQLWSController(
            services: .init(
                schemas: dataSchemas, callers: callers, executor: graphQL, feed: feed, hub: hub, settings: configuration.graphQLWS,
                maxMessageBytes: configuration.graphQLWSMaxMessageBytes, logger: logger)
        ).addRoutes(to: webSocketRouter)
        DataController(schemas: dataSchemas, accounts: accounts, groups: userGroups, executor: graphQL).addAdminRoutes(to: admin)
        WebController(accounts: accounts, web: web, sessions: configuration.sessions).addRoutes(to: root)
        let associatedDomains = AssociatedDomainsController(store: associatedDomainStore, file: associationFile)
        associatedDomains.addPublicRoutes(to: root)
        associatedDomains.addAdminRoutes(to: admin)
        DataJobsController(queue: jobs.queue, apps: appRepository).addAdminRoutes(to: admin)
        let uploads = ReleaseUploads(releases: releases, chunkSize: blobs.chunkSize, maxSize: configuration.maxArtifactSize)
        uploadsExpiry = ReleaseUploadsExpiry(uploads: uploads, readiness: readiness, interval: .seconds(3600), logger: logger)
        ReleasesController(
            releases: releases, uploads: uploads, apps: appRepository, live: live, maxArtifactSize: configuration.maxArtifactSize
        ).addRoutes(to: admin)
        let adminAPI = AdminAPI()
        ConsoleController(
            api: adminAPI, tokens: tokens,
            sessions: ConsoleSessionStore(
                database: database, lifetime: configuration.sessions.consoleLifetime, idleLimit: configuration.sessions.consoleIdleLimit),
            web: web, readiness: readiness, throttle: signInThrottle
        ).addRoutes(to: root)
        allowedMethods.record(router)
        adminAPI.attach(router.buildResponder())
    }
}

extension ServerParts {
    /// The `Server` header of every answer.
    static let serverName = "kizuna"

    /// The application serving these parts; the store closes after the server has drained.
    /// - Parameter onListening: told the port once the server listens (useful with port 0).
    func application(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) -> some ApplicationProtocol {
        let limiter = ConnectionLimiter(limit: configuration.maxConnections, shutdownGrace: configuration.shutdownGrace, logger: logger)
        let logger = logger
        let idleTimeout = TimeAmount(configuration.idleTimeout)
        let webSocketResponder = webSocketRouter.buildResponder()
        let lane = deviceLane
        let channels = HTTP1WebSocketUpgradeChannel.Configuration(
            // The handlers are an autoclosure: each connection that stays HTTP gets its own.
            http1: .init(
                additionalChannelHandlers: [ParserErrorResponder(logger: logger), ExpectContinueResponder()] + (lane.map { [$0.installer()] } ?? []),
                idleTimeout: idleTimeout),
            // A frame may be as large as a message (within what NIO's decoder takes); graphql-transport-ws has
            // its own keep-alive (`ping` messages), so no WebSocket ping frames besides.
            ws: .init(maxFrameSize: min(configuration.graphQLWSMaxMessageBytes, 64 << 20), autoPing: .disabled))
        let server = HTTPServerBuilder { responder in
            UpgradableHTTPChannel(
                upgrading: HTTP1WebSocketUpgradeChannel(responder: responder, webSocketResponder: webSocketResponder, configuration: channels),
                limiter: limiter, deviceLane: lane, firstRequestTimeout: idleTimeout, logger: logger)
        }
        return Application(
            router: router,
            server: server,
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: Self.serverName),
            // Stopped in reverse order: the push sender, the hub and the job runner stop before the feed does and the store closes.
            services: [
                DatabaseService(database: database, logger: logger, storeLock: storeLock), startup, feed, jobs, sweeper, uploadsExpiry, hub,
                pushSender,
                mirrors,
            ],
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
            logger: logger
        )
    }
}
