import Foundation
import HTTPTypes
import Hummingbird
import KizunaCore
import Logging

/// Requires an account session on every route it guards: `Authorization: Bearer kzs_…` from apps, or the session
/// cookie from browsers.
///
/// A cookie rides along on requests other sites trigger, so a cookie-authenticated request that changes anything
/// must come from this site's own pages: its `Origin` (or `Sec-Fetch-Site`) is checked. `SameSite=Lax` already keeps
/// the cookie off cross-site posts in current browsers; this is the second lock.
struct SessionMiddleware: RouterMiddleware {
    typealias Context = KizunaRequestContext
    let accounts: AccountService
    let web: WebSettings

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let token: String
        if let bearer = request.bearerToken {
            token = bearer
        } else if let cookie = web.sessionToken(in: request) {
            guard request.method == .get || request.method == .head || web.isSameOrigin(request) else {
                throw KizunaError(.forbidden, "A cookie-authenticated change must come from this site's own pages.")
            }
            token = cookie
        } else {
            throw KizunaError(.unauthorized, "Sign in first: send 'Authorization: Bearer <access token>' or the session cookie.")
        }
        var context = context
        let session = try await accounts.authenticate(token)
        context.session = session
        context.logger[metadataKey: "user"] = "\(session.account.id)"
        return try await next(request, context)
    }
}

extension KizunaRequestContext {
    /// The session ``SessionMiddleware`` found; only call on routes it guards.
    func requireSession() throws -> AuthenticatedSession {
        guard let session else { throw KizunaError(.unauthorized, "Sign in first.") }
        return session
    }
}

extension WebSettings {
    /// The cookie carrying a browser session: `Secure; HttpOnly; SameSite=Lax; Path=/` and host-only (no `Domain`),
    /// or without `Secure` in the loopback development mode.
    func sessionCookie(_ token: String, lifetime: Duration) -> Cookie {
        Cookie(
            name: cookieName, value: token, maxAge: Int(lifetime.components.seconds), path: "/", secure: cookieMode == .secure, httpOnly: true,
            sameSite: .lax)
    }

    /// The session token the request's cookie carries, if any.
    func sessionToken(in request: Request) -> String? {
        request.cookies[cookieName].map(\.value).flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The device cookie (a device token) a browser gets at its first successful sign-in (a year, `HttpOnly`,
    /// host-only): later sign-ins from it are throttled on its own key, not its address's (see ``SignInThrottle``).
    /// It is not a session and signs nothing in.
    func deviceCookie(_ token: String) -> Cookie {
        Cookie(
            name: cookieMode == .secure ? "__Host-kizuna_device" : "kizuna_device", value: token, maxAge: 365 * 86_400, path: "/",
            secure: cookieMode == .secure, httpOnly: true, sameSite: .lax)
    }

    /// The device cookie the request carries, if any.
    func deviceToken(in request: Request) -> String? {
        request.cookies[cookieMode == .secure ? "__Host-kizuna_device" : "kizuna_device"].map(\.value).flatMap { $0.isEmpty ? nil : $0 }
    }

    /// A cookie that removes the session cookie.
    var clearedSessionCookie: Cookie {
        Cookie(name: cookieName, value: "", maxAge: 0, path: "/", secure: cookieMode == .secure, httpOnly: true, sameSite: .lax)
    }

    /// Whether a state-changing browser request comes from this site: its `Origin` is the public URL's origin (or,
    /// without one, names the `Host` the request was sent to). Without a usable `Origin`, `Sec-Fetch-Site` decides;
    /// a request with neither did not come from a current browser.
    func isSameOrigin(_ request: Request) -> Bool {
        // Browsers send `Origin: null` under some referrer policies; Sec-Fetch-Site then still tells.
        if let origin = request.headers[.origin], origin != "null" {
            guard let url = URL(string: origin), let host = url.host else { return false }
            let port = url.port.map { ":\($0)" } ?? ""
            if let publicURL {
                let expectedPort = publicURL.port.map { ":\($0)" } ?? ""
                return url.scheme == publicURL.scheme && host == publicURL.host && port == expectedPort
            }
            return request.head.authority.map { $0.lowercased() == (host + port).lowercased() } ?? false
        }
        if let site = request.headers[.secFetchSite] { return site == "same-origin" || site == "none" }
        return request.headers[.origin] == nil
    }

    /// `path` made absolute with the public URL, when there is one.
    func link(_ path: String) -> String {
        guard let publicURL else { return path }
        var base = publicURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        return base + path
    }

    /// Whether `path` is safe to redirect to after sign-in: a path on this site, judged the way a browser will parse
    /// the `Location` it ends up in.
    ///
    /// The URL standard removes ASCII tab and newlines anywhere in a URL, trims leading C0 controls and spaces, and
    /// reads `\` as `/` in http(s) URLs, so `/<TAB>/evil.example` and `/\evil.example` both leave the site. Rather
    /// than normalise and hope to agree with every browser, anything a browser could rewrite is refused: only
    /// printable ASCII, one leading `/` not followed by `/` or `\` (raw or percent-encoded), no backslash anywhere
    /// and no percent-encoded control character. Non-ASCII (full-width `／` among it) is refused too: the site's own
    /// paths are ASCII.
    static func isLocalPath(_ path: String) -> Bool {
        let bytes = Array(path.utf8)
        guard bytes.count >= 1, bytes.count <= 512, bytes[0] == UInt8(ascii: "/") else { return false }
        guard bytes.allSatisfy({ (0x21...0x7E).contains($0) && $0 != UInt8(ascii: "\\") }) else { return false }
        let lowered = path.lowercased()
        if lowered.hasPrefix("//") || lowered.hasPrefix("/%2f") || lowered.hasPrefix("/%5c") { return false }
        // %00–%1F, %7F and %5C: encoded controls and backslashes have no place in a link back to this site.
        var index = 0
        while let percent = bytes[index...].firstIndex(of: UInt8(ascii: "%")) {
            guard percent + 2 < bytes.count, let value = UInt8(String(decoding: bytes[(percent + 1)...(percent + 2)], as: UTF8.self), radix: 16)
            else { return false }
            if value < 0x20 || value == 0x7F || value == UInt8(ascii: "\\") { return false }
            index = percent + 1
        }
        return true
    }
}
