import Foundation
import KizunaCore

/// The signed-in account of a ``KizunaApp``: sign-up, sign-in and sign-out, the session kept in a ``SecureStore``,
/// and a valid access token for every SDK request.
///
/// ```swift
/// let app = try KizunaApp(server: url, appId: "shop", directory: dir, device: .current())
/// do {
///     let account = try await app.auth.signIn(identifier: email, password: password)
/// } catch let error as KizunaError where error.code == .invalidCredentials {
///     // "The identifier or the password is wrong."
/// } catch let error as KizunaError where error.code == .throttled {
///     // wait error.retryAfter seconds
/// }
/// let web = try await app.auth.handoff(next: "/account")   // open web.url in a WKWebView: it arrives signed in
/// ```
///
/// The access token is refreshed a minute before it expires, once however many requests need it at that moment
/// (a refresh token works once; using it twice would sign the session out). When the server says the session is
/// over — signed out elsewhere, the password changed, the account disabled — the stored session is removed and the
/// error is rethrown with its code (`session_expired`, `account_disabled`).
///
/// Errors are ``KizunaError`` values; switch on ``KizunaError/code``: `validation_failed` (with every failing rule in
/// `details`), `conflict` (identifier taken), `invalid_credentials`, `throttled` (with `retryAfter`),
/// `account_disabled`, `session_expired`, `unauthorized` (not signed in), `transport`, `timeout`.
public actor Auth {
    /// What is kept in the secure store.
    private struct Stored: Codable {
        var account: AccountInfo
        var tokens: SessionTokens
    }

    private let http: KizunaHTTPClient
    private let store: SecureStore
    private let device: DeviceRegistration?
    private let clock: @Sendable () -> Date
    private var loaded = false
    private var cached: Stored?
    private var refreshing: Task<Stored, any Error>?
    private static let key = "session"

    /// How long before expiry the access token is renewed.
    public static let refreshMargin: TimeInterval = 60

    init(http: KizunaHTTPClient, store: SecureStore, device: DeviceRegistration?, clock: @escaping @Sendable () -> Date = Date.init) {
        self.http = http
        self.store = store
        self.device = device
        self.clock = clock
    }

    /// The stored session, read from the secure store on first use rather than when ``KizunaApp`` is created, so
    /// launch does not wait on a Keychain or file read.
    private var stored: Stored? {
        get {
            if !loaded {
                // A session that cannot be read (a damaged item, another key) counts as signed out.
                cached = (try? store.data(forKey: Self.key)).flatMap { $0 }.flatMap { try? WireFormat.decoder().decode(Stored.self, from: $0) }
                loaded = true
            }
            return cached
        }
        set {
            // Who was signed in, read from the store if nothing read it yet; a change is another account (or none),
            // never the same account's refreshed session with its details written again.
            let before = stored?.account.id
            cached = newValue
            loaded = true
            if newValue?.account.id != before {
                for watcher in accountWatchers.values { watcher.yield(newValue?.account) }
            }
        }
    }

    private var accountWatchers: [Int: AsyncStream<AccountInfo?>.Continuation] = [:]
    private var watcherCount = 0

    /// The signed-in account now, and again each time another signs in or the session ends (`nil`); a refreshed
    /// token of the same account is no change.
    public func accountChanges() -> AsyncStream<AccountInfo?> {
        watcherCount += 1
        let key = watcherCount
        let (stream, continuation) = AsyncStream.makeStream(of: AccountInfo?.self, bufferingPolicy: .bufferingNewest(1))
        continuation.yield(account)
        accountWatchers[key] = continuation
        continuation.onTermination = { _ in Task { await self.stopWatching(key) } }
        return stream
    }

    private func stopWatching(_ key: Int) {
        accountWatchers[key] = nil
    }

    /// The signed-in account, or `nil`.
    public var account: AccountInfo? { stored?.account }

    /// Whether a session is stored (it may still turn out to be expired on the server).
    public var isSignedIn: Bool { stored != nil }

    /// The stored session's id, to find it in ``sessions()``.
    public var sessionId: String? { stored?.tokens.sessionId }

    /// Creates an account and signs in.
    /// - Throws: `validation_failed` listing every failing rule (check first with ``AccountValidation``), `conflict`.
    @discardableResult
    public func signUp(identifier: String, password: String) async throws(KizunaError) -> AccountInfo {
        try await start("/v1/auth/sign-up", identifier: identifier, password: password)
    }

    /// Signs in.
    /// - Throws: `invalid_credentials`, `throttled` (with `retryAfter`), `account_disabled`.
    ///
    /// The device token the server gave this device at an earlier sign-in of the same account is sent along (it stays
    /// in the secure store after sign-out), so the account's owner is not locked out by guesses made elsewhere.
    @discardableResult
    public func signIn(identifier: String, password: String) async throws(KizunaError) -> AccountInfo {
        try await start("/v1/auth/sign-in", identifier: identifier, password: password)
    }

    /// Signs out this session (or, with `everywhere`, every session of the account). The stored session is removed
    /// even when the server cannot be reached.
    public func signOut(everywhere: Bool = false) async throws(KizunaError) {
        defer { try? forget() }
        guard let token = stored?.tokens.accessToken else { return }
        do {
            try await http.send(
                "POST", "/v1/auth/sign-out", body: SignOutRequest(everywhere: everywhere), headers: ["Authorization": "Bearer \(token)"])
        } catch  where error.code == .sessionExpired || error.code == .unauthorized {
            // Already over on the server.
        }
    }

    /// A valid access token, refreshed first when it expires within ``refreshMargin``.
    /// - Throws: `unauthorized` when signed out; `session_expired` when the session is over (it is then forgotten).
    public func accessToken() async throws(KizunaError) -> String {
        guard let current = stored else { throw KizunaError(.unauthorized, "Not signed in.") }
        if current.tokens.expiresAt.timeIntervalSince(clock()) > Self.refreshMargin { return current.tokens.accessToken }
        return try await refresh().tokens.accessToken
    }

    /// The access token when signed in, else `nil`: what ``KizunaApp`` attaches to its requests.
    func accessTokenIfSignedIn() async throws(KizunaError) -> String? {
        guard stored != nil else { return nil }
        return try await accessToken()
    }

    /// Exchanges the refresh token for new tokens now. Concurrent callers share one exchange.
    @discardableResult
    public func refreshSession() async throws(KizunaError) -> SessionTokens {
        try await refresh().tokens
    }

    /// A one-time code (single use, 60 s) that signs a web view in: open ``HandoffCode/url`` in it.
    ///
    /// The URL is always absolute: a server without a configured public URL answers a path, which is resolved here
    /// against the server this app talks to, so it can go straight into a `WKWebView`.
    /// - Parameter next: The same-origin path to land on (default `/account`).
    public func handoff(next: String? = nil) async throws(KizunaError) -> HandoffCode {
        var code: HandoffCode = try await authorized { token throws(KizunaError) in
            try await http.send("POST", "/v1/me/handoff", body: HandoffRequest(next: next), headers: ["Authorization": "Bearer \(token)"])
        }
        if let absolute = URL(string: code.url, relativeTo: http.baseURL)?.absoluteURL {
            code.url = absolute.absoluteString
        }
        return code
    }

    /// Changes the password; the server signs every other session out.
    public func changePassword(current: String, new: String) async throws(KizunaError) {
        try await authorized { token throws(KizunaError) in
            try await http.send(
                "POST", "/v1/me/password", body: ChangePasswordRequest(currentPassword: current, newPassword: new),
                headers: ["Authorization": "Bearer \(token)"])
        }
    }

    /// Deletes the account (its sessions and devices go with it) and forgets the session.
    public func deleteAccount(password: String) async throws(KizunaError) {
        try await authorized { token throws(KizunaError) in
            try await http.send("DELETE", "/v1/me", body: DeleteAccountRequest(password: password), headers: ["Authorization": "Bearer \(token)"])
        }
        try forget()
    }

    /// The account's sessions, newest first; the caller's has `current == true`.
    public func sessions() async throws(KizunaError) -> [SessionInfo] {
        try await authorized { token throws(KizunaError) in
            try await http.send("GET", "/v1/me/sessions", headers: ["Authorization": "Bearer \(token)"], as: SessionList.self).sessions
        }
    }

    /// The account as the server has it now.
    public func currentAccount() async throws(KizunaError) -> AccountInfo {
        try await authorized { token throws(KizunaError) in
            try await http.send("GET", "/v1/me", headers: ["Authorization": "Bearer \(token)"], as: AccountInfo.self)
        }
    }

    // MARK: Internals

    private func start(_ path: String, identifier: String, password: String) async throws(KizunaError) -> AccountInfo {
        // One device token per account on this device, kept apart from the session so that signing out keeps it.
        let trustKey = "trust." + AccountIdentifier(identifier).normalized
        let trust = try? store.string(forKey: trustKey)
        let credentials = Credentials(identifier: identifier, password: password, device: device, trustToken: trust ?? nil)
        let grant: SessionGrant = try await http.send("POST", path, body: credentials)
        if let issued = grant.trustToken { try? store.label("Kizuna device token").set(issued, forKey: trustKey) }
        try keep(Stored(account: grant.account, tokens: grant.session))
        return grant.account
    }

    /// Runs a request with a valid token; a `session_expired` answer to a token that looked valid gets one refresh
    /// and retry (the server may have rotated it through another install of this store).
    private func authorized<Result>(_ request: (String) async throws(KizunaError) -> Result) async throws(KizunaError) -> Result {
        let token = try await accessToken()
        do {
            return try await request(token)
        } catch  where error.code == .sessionExpired {
            return try await request(try await refresh().tokens.accessToken)
        } catch  where error.code == .accountDisabled {
            try? forget()
            throw error
        }
    }

    private func refresh() async throws(KizunaError) -> Stored {
        if let refreshing {
            return try await Self.value(of: refreshing)
        }
        guard let current = stored else { throw KizunaError(.unauthorized, "Not signed in.") }
        let http = http
        // The install id lets the server answer a retry (the first answer lost on a bad network) with the same pair.
        let body = RefreshRequest(refreshToken: current.tokens.refreshToken, installId: device?.installId)
        // An unstructured task on purpose: callers that arrive while it runs await this same task (above), so
        // concurrent requests spend the refresh token once, and one caller's cancellation does not cancel the
        // exchange the others wait on (a cancelled exchange could leave the server's new pair unread).
        let task = Task<Stored, any Error> {
            let grant: SessionGrant = try await http.send("POST", "/v1/auth/refresh", body: body)
            return Stored(account: grant.account, tokens: grant.session)
        }
        refreshing = task
        defer { refreshing = nil }
        do {
            let renewed = try await Self.value(of: task)
            try keep(renewed)
            return renewed
        } catch {
            if error.code == .sessionExpired || error.code == .accountDisabled { try? forget() }
            throw error
        }
    }

    private static func value(of task: Task<Stored, any Error>) async throws(KizunaError) -> Stored {
        do {
            return try await task.value
        } catch let error as KizunaError {
            throw error
        } catch {
            throw KizunaError(.transport, "The session refresh failed: \(error)")
        }
    }

    private func keep(_ session: Stored) throws(KizunaError) {
        let data: Data
        do {
            data = try WireFormat.encoder().encode(session)
        } catch {
            throw KizunaError(.internalError, "The session could not be encoded.")
        }
        try store.label("Kizuna session").set(data, forKey: Self.key)
        stored = session
    }

    private func forget() throws(KizunaError) {
        stored = nil
        try store.remove(Self.key)
    }
}
