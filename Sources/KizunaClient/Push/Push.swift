import Foundation
import KizunaCore

/// The app's push registration (`app.push`): hands the server the device token iOS gives the app, as the signed-in
/// user, and keeps it registered as things change.
///
/// ```swift
/// // In application(_:didRegisterForRemoteNotificationsWithDeviceToken:), at every launch:
/// func registered(_ deviceToken: Data, app: KizunaApp) async throws {
///     #if DEBUG
///         try await app.push.register(deviceToken: deviceToken, environment: .sandbox)
///     #else
///         try await app.push.register(deviceToken: deviceToken)
///     #endif
/// }
/// ```
///
/// The token is sent as the hex of its bytes (never `description`, which iOS 13 and later cut short). A registration
/// goes to the server when something in it changed since the last one the server accepted — the token, the app
/// version, the locale, the time zone, the signed-in user — and not otherwise, so calling it at every launch costs
/// nothing. After the first registration of a run, a sign-in or sign-out registers again by itself, so the server
/// links the token to whoever is signed in, or to nobody.
public actor Push {
    private let http: KizunaHTTPClient
    private let path: String
    private let files: FileStore
    private let device: DeviceContext
    private let auth: Auth
    /// The last token and environment the app gave, to register again on an account change.
    private var current: (token: APNsDeviceToken, environment: APNsEnvironment)?
    private var following: Task<Void, Never>?
    private var watchers: [Int: AsyncStream<PushDevice>.Continuation] = [:]
    private var counter = 0
    /// The registration under way, which the next one waits for.
    private var inFlight: Task<PushDevice, any Error>?

    /// What the server accepted last, kept across launches.
    struct Stored: Codable, Equatable {
        var registration: PushRegistration
        var userId: String?
        var device: PushDevice
    }

    private static let file = "push-registration.json"

    init(http: KizunaHTTPClient, path: String, files: FileStore, device: DeviceContext, auth: Auth) {
        self.http = http
        self.path = path
        self.files = files
        self.device = device
        self.auth = auth
    }

    /// Registers the device token APNs gave the app, unless the server already has this registration.
    /// - Parameters:
    ///   - deviceToken: The token's bytes, as `didRegisterForRemoteNotificationsWithDeviceToken` hands them.
    ///   - environment: `.sandbox` for development builds (the `aps-environment` entitlement `development`).
    /// - Returns: The registration as the server stored it.
    /// - Throws: `validation_failed` for bytes that are no token; the server's refusal; `transport` or `timeout`.
    @discardableResult
    public func register(deviceToken: Data, environment: APNsEnvironment = .production) async throws(KizunaError) -> PushDevice {
        let token = try APNsDeviceToken(bytes: deviceToken)
        current = (token, environment)
        followAccount()
        return try await registerCurrent()
    }

    /// Removes this install from the server's push registry: no more notifications reach it.
    public func unregister() async throws(KizunaError) {
        current = nil
        following?.cancel()
        following = nil
        let install = device.installId ?? ""
        do {
            try await http.send(
                "DELETE", path + "/push/devices/" + (install.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? install))
        } catch  where error.code == .notFound {
            // Not registered: nothing to remove.
        }
        files.remove(Self.file)
    }

    /// Decodes a notification's payload (`userInfo`) into the app's own type.
    /// - Throws: `validation_failed` when it is not JSON-shaped or does not fit `type`.
    public nonisolated static func decode<Payload: Decodable>(
        _ userInfo: [AnyHashable: Any], as type: Payload.Type = Payload.self
    ) throws(KizunaError)
        -> Payload
    {
        var object: [String: Any] = [:]
        for (key, value) in userInfo { object[String(describing: key)] = value }
        do {
            guard JSONSerialization.isValidJSONObject(object) else {
                throw KizunaError(.validationFailed, "The notification's payload is not JSON-shaped.", field: "userInfo")
            }
            let data = try JSONSerialization.data(withJSONObject: object)
            return try WireFormat.decoder().decode(Payload.self, from: data)
        } catch let error as KizunaError {
            throw error
        } catch {
            throw KizunaError(.validationFailed, "The notification's payload does not decode as \(Payload.self): \(error)", field: "userInfo")
        }
    }

    // MARK: Registering

    /// Registers what is current, one registration at a time: each waits for the one before, then sends only if
    /// something changed since (so a call and an account change arriving together send once).
    private func registerCurrent() async throws(KizunaError) -> PushDevice {
        let previous = inFlight
        let task = Task { () async throws -> PushDevice in
            _ = try? await previous?.value
            return try await self.sendIfChanged()
        }
        inFlight = task
        do {
            return try await task.value
        } catch let error as KizunaError {
            throw error
        } catch {
            throw KizunaError(.internalError, "The push registration failed: \(error)")
        }
    }

    private func sendIfChanged() async throws(KizunaError) -> PushDevice {
        guard let current else { throw KizunaError(.conflict, "No device token to register yet.", field: "deviceToken") }
        let registration = PushRegistration(
            device: device, token: current.token.hex, environment: current.environment, timeZone: TimeZone.current.identifier)
        let userId = await auth.account?.id
        if let stored = files.read(Stored.self, from: Self.file, format: 1), stored.registration == registration, stored.userId == userId {
            return stored.device
        }
        let answered: PushDevice = try await http.send("POST", path + "/push/devices", body: registration)
        try files.write(Stored(registration: registration, userId: userId, device: answered), to: Self.file, format: 1)
        for watcher in watchers.values { watcher.yield(answered) }
        return answered
    }

    /// Each registration the server accepts from now on (tests await the ones an account change makes).
    func registrations() -> AsyncStream<PushDevice> {
        counter += 1
        let key = counter
        let (stream, continuation) = AsyncStream.makeStream(of: PushDevice.self)
        watchers[key] = continuation
        continuation.onTermination = { _ in Task { await self.stopWatching(key) } }
        return stream
    }

    private func stopWatching(_ key: Int) {
        watchers[key] = nil
    }

    /// Registers again at each sign-in or sign-out (the account now comes first: a change made before this task
    /// listened is caught there; an unchanged registration is not sent).
    private func followAccount() {
        guard following == nil else { return }
        let auth = auth
        following = Task { [weak self] in
            for await _ in await auth.accountChanges() {
                guard let self else { return }
                _ = try? await self.registerCurrent()  // offline: the next register(deviceToken:) catches up
            }
        }
    }
}

extension KizunaApp {
    /// The app's push registration.
    public var push: Push { pushRegistry }
}
