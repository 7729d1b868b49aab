import Foundation

/// How long sessions and one-time codes live.
public struct SessionPolicy: Sendable, Hashable {
    /// An app session's access token. Short, because a bearer token that leaks works until it expires.
    public var accessLifetime: Duration
    /// An app session's refresh token; each refresh extends the session by this much again.
    public var refreshLifetime: Duration
    /// A browser's cookie session.
    public var webLifetime: Duration
    /// A web-view handoff code (at most 60 s).
    public var handoffLifetime: Duration
    /// A password-reset token.
    public var resetLifetime: Duration
    /// How long after a refresh the token it exchanged, presented again from the session's own install, gets the same
    /// new pair back (the answer was lost on the way) instead of signing the session out as a stolen copy.
    public var refreshReuseGrace: Duration
    /// An admin console session, at most, from sign-in.
    public var consoleLifetime: Duration = .seconds(8 * 3600)
    /// An admin console session left unused.
    public var consoleIdleLimit: Duration = .seconds(30 * 60)

    public init(
        accessLifetime: Duration = .seconds(3600), refreshLifetime: Duration = .seconds(60 * 86_400), webLifetime: Duration = .seconds(14 * 86_400),
        handoffLifetime: Duration = .seconds(60), resetLifetime: Duration = .seconds(3600), refreshReuseGrace: Duration = .seconds(30)
    ) {
        self.refreshReuseGrace = refreshReuseGrace
        self.accessLifetime = accessLifetime
        self.refreshLifetime = refreshLifetime
        self.webLifetime = webLifetime
        self.handoffLifetime = min(handoffLifetime, .seconds(60))
        self.resetLifetime = resetLifetime
    }

    /// One hour for access tokens, 60 days for refresh tokens, 14 days for cookies, 60 s for handoff codes, an hour
    /// for reset tokens, 30 s of grace for a retried refresh, and console sessions of 8 hours at most and 30 minutes
    /// unused.
    public static let `default` = SessionPolicy()
}

/// Brute-force protection for sign-in: failures are counted per account (by identifier, whether or not the account
/// exists) and per client address; past a free allowance each further failure locks that key for twice as long as
/// the last, up to a cap. A lock ends by itself; a successful sign-in clears the account's count.
public struct SignInThrottlePolicy: Sendable, Hashable {
    /// Failures per identifier before the first lock.
    public var accountAllowance: Int
    /// Failures per client address before the first lock (higher: many people may share an address).
    public var addressAllowance: Int
    /// The first lock.
    public var firstLock: Duration
    /// The longest lock.
    public var longestLock: Duration
    /// Failures older than this are forgotten.
    public var window: Duration

    public init(
        accountAllowance: Int = 5, addressAllowance: Int = 30, firstLock: Duration = .seconds(30), longestLock: Duration = .seconds(900),
        window: Duration = .seconds(3600)
    ) {
        self.accountAllowance = accountAllowance
        self.addressAllowance = addressAllowance
        self.firstLock = firstLock
        self.longestLock = longestLock
        self.window = window
    }

    /// 5 failures per account and 30 per address, then locks of 30 s doubling up to 15 minutes.
    public static let `default` = SignInThrottlePolicy()

    /// The lock after `failures` failures against `allowance`, or `nil` when still within it.
    func lock(afterFailures failures: Int, allowance: Int) -> Duration? {
        guard failures >= allowance else { return nil }
        let doublings = min(failures - allowance, 20)
        return min(firstLock * (1 << doublings), longestLock)
    }
}

/// Where the server is reached from outside and how its session cookie is set.
public struct WebSettings: Sendable, Hashable {
    /// The site's public origin, such as `https://example.com`; used for absolute links (handoff, reset) and to
    /// check `Origin` on form posts. `nil`: links are paths, and the `Host` header is the origin.
    public var publicURL: URL?

    /// The cookie that carries a browser session.
    public enum CookieMode: String, Sendable, Hashable {
        /// `__Host-kizuna_session; Secure; HttpOnly; SameSite=Lax; Path=/`: only over HTTPS.
        case secure
        /// `kizuna_session; HttpOnly; SameSite=Lax; Path=/`, without `Secure`: for plain HTTP on loopback during
        /// development, where browsers would drop a `Secure` cookie.
        case loopbackDevelopment
    }

    public var cookieMode: CookieMode
    /// Take the client's address from the last `X-Forwarded-For` entry (the one the proxy in front added) for
    /// per-address throttling. Only when a proxy in front always sets it; otherwise clients could pick their address.
    public var trustForwardedFor: Bool

    public init(publicURL: URL? = nil, cookieMode: CookieMode = .secure, trustForwardedFor: Bool = false) {
        self.publicURL = publicURL
        self.cookieMode = cookieMode
        self.trustForwardedFor = trustForwardedFor
    }

    /// The cookie's name.
    var cookieName: String { cookieMode == .secure ? "__Host-kizuna_session" : "kizuna_session" }

    /// The settings for a server listening on `host` and reached at `publicURL`: the loopback fallback only when
    /// the public URL is plain HTTP on a loopback host (or absent while listening on loopback).
    public static func derived(host: String, publicURL: URL?, trustForwardedFor: Bool = false) -> WebSettings {
        let loopback: Set<String> = ["127.0.0.1", "::1", "[::1]", "localhost"]
        let development =
            if let publicURL { publicURL.scheme == "http" && loopback.contains(publicURL.host ?? "") } else { loopback.contains(host) }
        return WebSettings(publicURL: publicURL, cookieMode: development ? .loopbackDevelopment : .secure, trustForwardedFor: trustForwardedFor)
    }
}

extension Duration {
    /// Whole milliseconds.
    var milliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
}
