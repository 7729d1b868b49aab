import Foundation
import KizunaCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// One app's connection to its Kizuna server: where the server is, which app this is, what the device says about
/// itself, and the directory the SDK keeps its state in.
///
/// ``RemoteConfig`` and ``UpdateGate`` are built on it. Create one at launch and share it:
///
/// ```swift
/// let support = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask)[0]
/// let app = try KizunaApp(
///     server: URL(string: "https://api.example.com")!,
///     appId: "shop",
///     directory: support.appending(path: "Kizuna"),
///     device: try .current()
/// )
/// ```
public struct KizunaApp: Sendable {
    /// The server's base URL.
    public let server: URL
    /// The app's id on the server.
    public let appId: String
    /// What the device says about itself; ``DeviceContext/installId`` is always set.
    public let device: DeviceContext
    let files: FileStore
    let http: KizunaHTTPClient
    /// The signed-in account; its access token goes with every request this app's SDK objects make.
    public let auth: Auth
    /// The app's path prefix on the server, `/v1/apps/<id>`, with the id percent-encoded.
    let path: String
    /// The data API's WebSockets (``DataClient/subscribe(_:variables:operationName:field:as:)``).
    let realtime: DataRealtime
    /// The data API's outbox (``DataClient/outbox``), in `data.sqlite` in the app's directory.
    let outbox: Outbox
    /// The data API's offline cache (``DataClient/observe(_:)``), in the same database.
    let cache: DataCache
    /// The push registration (``push``).
    let pushRegistry: Push

    /// Creates the connection and, on first use, the install id.
    /// - Parameters:
    ///   - server: The server's base URL.
    ///   - appId: The app's id on the server.
    ///   - directory: Where the SDK keeps its files (created if missing). Use Application Support, not Caches:
    ///     the last activated config and the last gate decision must survive the system clearing caches.
    ///   - device: The device context. When its `installId` is `nil`, the SDK creates a random one on first use
    ///     and keeps it in `directory`.
    ///   - timeout: The deadline for each request (default 10 seconds); an offline device falls back to stored
    ///     state after at most this long.
    ///   - session: The URL session to use.
    ///   - secureStore: Where ``auth`` keeps the session (default: `SecureStore(service: "kizuna.<appId>")`, the
    ///     Keychain on Apple platforms).
    ///   - deviceName: A label for this install in the account's session list, such as the device's name.
    /// - Throws: `bad_request` when `directory` cannot be created or written, or `appId` cannot be put in a URL.
    public init(
        server: URL,
        appId: String,
        directory: URL,
        device: DeviceContext,
        timeout: Duration = .seconds(10),
        session: URLSession = .shared,
        secureStore: SecureStore? = nil,
        deviceName: String? = nil
    ) throws(KizunaError) {
        self.server = server
        self.appId = appId
        path = "/v1/apps/" + (try pathSegment(appId))
        files = try FileStore(directory: directory)
        var device = device
        if device.installId == nil {
            device.installId = try Self.installId(in: files)
        }
        self.device = device
        let plain = KizunaHTTPClient(baseURL: server, timeout: timeout, session: session)
        let auth = Auth(
            http: plain, store: secureStore ?? SecureStore(service: "kizuna.\(appId)"),
            device: device.installId.map { DeviceRegistration(appId: appId, installId: $0, name: deviceName) })
        self.auth = auth
        var http = plain
        http.authorization = { () async throws(KizunaError) -> String? in try await auth.accessTokenIfSignedIn() }
        self.http = http
        guard let webSocket = DataRealtime.webSocketURL(server, path: path + "/graphql") else {
            throw KizunaError(.badRequest, "\(server.absoluteString) is not a server address a WebSocket can be opened to.", field: "server")
        }
        let realtime = DataRealtime(url: webSocket, connector: .platform(session: session)) { () async throws(KizunaError) -> String? in
            try await auth.accessTokenIfSignedIn()
        }
        self.realtime = realtime
        // A socket authenticated as one account must not carry another's subscriptions: reopened at each sign-in or
        // sign-out (the first value is the account now).
        Task {
            for await _ in await auth.accountChanges().dropFirst() { await realtime.credentialsChanged() }
        }
        let graphQL = path + "/graphql"
        let database = LocalDatabase(url: files.directory.appendingPathComponent("data.sqlite"))
        outbox = Outbox(database: database, auth: auth) {
            [http] document, variables throws(DataError) in
            try await DataClient.execute(document, variables: variables, operationName: "KizunaOutbox", http: http, path: graphQL, apiKey: nil)
        }
        cache = DataCache(database: database, outbox: outbox, auth: auth)
        pushRegistry = Push(http: http, path: path, files: files, device: device, auth: auth)
    }

    /// The deadline for each request.
    public var timeout: Duration { http.timeout }

    private static func installId(in files: FileStore) throws(KizunaError) -> String {
        if let existing = files.read(String.self, from: "install-id.json", format: 1) { return existing }
        let created = UUID().uuidString.lowercased()
        try files.write(created, to: "install-id.json", format: 1)
        return created
    }
}

extension DeviceContext {
    /// The context of the running app: version and build from `bundle`, the OS version, the current locale and
    /// region.
    /// - Parameters:
    ///   - bundle: The app's bundle (default `.main`).
    ///   - attributes: Custom attributes for conditions.
    /// - Throws: `validation_failed` when the bundle has no `CFBundleShortVersionString`.
    public static func current(bundle: Bundle = .main, attributes: [String: AttributeValue]? = nil) throws(KizunaError) -> DeviceContext {
        guard let version = bundle.object(forInfoDictionaryKey: "CFBundleShortVersionString") as? String else {
            throw KizunaError(
                .validationFailed, "The bundle at \(bundle.bundlePath) has no CFBundleShortVersionString; pass the app version yourself.",
                field: "appVersion")
        }
        let os = ProcessInfo.processInfo.operatingSystemVersion
        return DeviceContext(
            appVersion: version,
            buildNumber: bundle.object(forInfoDictionaryKey: "CFBundleVersion") as? String,
            platform: .running,
            osVersion: "\(os.majorVersion).\(os.minorVersion).\(os.patchVersion)",
            locale: Locale.preferredLanguages.first ?? Locale.current.identifier,
            country: Locale.current.region?.identifier,
            attributes: attributes
        )
    }
}

extension Platform {
    /// The platform this code runs on, or `nil` off Apple platforms.
    static var running: Platform? {
        #if os(iOS)
            .ios
        #elseif os(macOS)
            .macos
        #elseif os(tvOS)
            .tvos
        #elseif os(watchOS)
            .watchos
        #elseif os(visionOS)
            .visionos
        #else
            nil
        #endif
    }
}
