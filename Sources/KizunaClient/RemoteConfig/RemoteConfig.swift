import Foundation
import KizunaCore

/// Remote config on the device: defaults in code, values fetched from the server, and a deliberate `activate()`
/// between the two so the app decides when new values take effect.
///
/// - The last activated values are written atomically to the app's directory and read back at start, so an app
///   that is killed, relaunched offline or throttled never falls back to defaults it had moved past.
/// - A failed fetch changes nothing: it does not count towards `minimumInterval`, so an offline first launch
///   does not leave the app unable to fetch once it is online again.
/// - Fetches end after ``KizunaApp/timeout`` at the latest, whatever the network does.
/// - When the server throttles this install, the fetch throws `throttled` with ``KizunaError/retryAfter``, and
///   fetches before that time throw the same without using the network.
///
/// Reads are synchronous and safe from any thread; they return the active value, else the default.
public final class RemoteConfig: Sendable {
    /// What a fetch did.
    public enum FetchStatus: Sendable, Hashable {
        /// New values arrived; call ``RemoteConfig/activate()`` to use them.
        case fetched(version: Int64)
        /// The server has nothing newer than what was fetched before.
        case notModified(version: Int64)
        /// The last successful fetch is younger than `minimumInterval`; the network was not used.
        case skipped
    }

    /// Where a value came from.
    public enum Source: Sendable, Hashable {
        /// The activated server values.
        case remote
        /// The defaults given in code.
        case `default`
        /// Neither has the key.
        case missing
    }

    /// A set of values from the server.
    public struct Snapshot: Codable, Sendable, Hashable {
        /// The template version the values were evaluated from.
        public var version: Int64
        /// The values for this device.
        public var values: [String: JSONValue]
        /// When they were fetched.
        public var fetchedAt: Date
    }

    struct Stored: Codable, Sendable {
        var active: Snapshot?
        var fetched: Snapshot?
        var etag: String?
        var lastFetchAt: Date?
        var throttledUntil: Date?
    }

    let app: KizunaApp
    let defaults: [String: JSONValue]
    let now: @Sendable () -> Date
    let state: PersistedState<Stored>

    static let file = "remote-config.json"
    static let format = 1

    /// Creates the config, loading the last activated values from the app's directory.
    /// - Parameters:
    ///   - app: The app's connection.
    ///   - defaults: The values to use for keys the server has not given (or before the first activation).
    ///   - now: The clock (for tests).
    public init(app: KizunaApp, defaults: [String: JSONValue] = [:], now: @escaping @Sendable () -> Date = Date.init) {
        self.app = app
        self.defaults = defaults
        self.now = now
        state = PersistedState(files: app.files, name: Self.file, format: Self.format, initial: Stored())
    }

    /// Creates the config with defaults taken from an `Encodable` value's properties (for example a struct whose
    /// property names are the parameter keys).
    /// - Throws: `bad_request` when `defaults` does not encode to a JSON object.
    public convenience init(
        app: KizunaApp, defaultsFrom defaults: some Encodable, now: @escaping @Sendable () -> Date = Date.init
    ) throws(KizunaError) {
        let object: [String: JSONValue]
        do {
            let data = try JSONEncoder().encode(defaults)
            object = try JSONDecoder().decode([String: JSONValue].self, from: data)
        } catch {
            throw KizunaError(.badRequest, "The defaults must encode to a JSON object of parameter keys: \(error)", field: "defaults")
        }
        self.init(app: app, defaults: object, now: now)
    }

    /// The version of the active values, or `nil` while only defaults are in use.
    public var activeVersion: Int64? { state.withLock { $0.active?.version } }

    /// The version of the newest fetched values, activated or not.
    public var fetchedVersion: Int64? { state.withLock { $0.fetched?.version } }

    /// When the last fetch succeeded.
    public var lastFetch: Date? { state.withLock { $0.lastFetchAt } }

    /// Fetches the values for this device unless the last successful fetch is younger than `minimumInterval`.
    /// The fetched values take effect with ``activate()``.
    /// - Parameter minimumInterval: The least time between two fetches that reach the server; zero always fetches.
    /// - Throws: `throttled` (with `retryAfter`), `timeout`, `transport`, or the server's error. Nothing changes.
    @discardableResult
    public func fetch(minimumInterval: Duration = .seconds(3600)) async throws(KizunaError) -> FetchStatus {
        let (lastFetch, throttledUntil) = state.withLock { ($0.lastFetchAt, $0.throttledUntil) }
        let now = now()
        if let throttledUntil, throttledUntil > now {
            let wait = Int(throttledUntil.timeIntervalSince(now).rounded(.up))
            throw KizunaError(.throttled, "This install fetched config too often; try again in \(wait) seconds.", retryAfter: wait)
        }
        if let lastFetch, minimumInterval > .zero, now.timeIntervalSince(lastFetch) < minimumInterval.seconds { return .skipped }
        return try await fetchFromServer(knownVersion: nil)
    }

    /// Makes the fetched values the active ones and stores them.
    /// - Returns: Whether the active values changed.
    /// - Throws: `internal_error` when they cannot be stored; the values are active in memory regardless.
    @discardableResult
    public func activate() async throws(KizunaError) -> Bool {
        let changed = state.withLock { stored -> Bool in
            guard let fetched = stored.fetched, fetched != stored.active else { return false }
            stored.active = fetched
            return true
        }
        if changed { try state.persist() }
        return changed
    }

    /// Fetches, then activates whatever is newest.
    /// - Returns: What the fetch did.
    @discardableResult
    public func fetchAndActivate(minimumInterval: Duration = .seconds(3600)) async throws(KizunaError) -> FetchStatus {
        let status = try await fetch(minimumInterval: minimumInterval)
        try await activate()
        return status
    }

    /// Asks the server for the values, telling it the newest version this device knows of so that an instance
    /// that has not caught up yet reloads instead of answering with older values.
    func fetchFromServer(knownVersion: Int64?) async throws(KizunaError) -> FetchStatus {
        let (etag, fetchedVersion) = state.withLock { ($0.etag, $0.fetched?.version) }
        let known = [knownVersion, fetchedVersion].compactMap { $0 }.max()
        let reply: KizunaHTTPClient.Reply
        do {
            reply = try await app.http.exchange(
                "POST", app.path + "/config:fetch",
                body: DeviceRequest(device: app.device, knownVersion: known),
                headers: etag.map { ["If-None-Match": $0] } ?? [:]
            )
        } catch  where error.code == .throttled {
            let until = now().addingTimeInterval(TimeInterval(error.retryAfter ?? 60))
            state.withLock { $0.throttledUntil = until }
            try? state.persist()
            throw error
        }
        let fetchedAt = now()
        if reply.status == 304, let fetchedVersion {
            state.withLock {
                $0.lastFetchAt = fetchedAt
                $0.throttledUntil = nil
            }
            try state.persist()
            return .notModified(version: fetchedVersion)
        }
        let result = try reply.decode(ConfigValues.self, what: "config:fetch")
        state.withLock {
            $0.fetched = Snapshot(version: result.version, values: result.values, fetchedAt: fetchedAt)
            $0.etag = reply.headers["etag"]
            $0.lastFetchAt = fetchedAt
            $0.throttledUntil = nil
        }
        try state.persist()
        return .fetched(version: result.version)
    }
}
