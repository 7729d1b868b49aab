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

    /// Whether `path` is a same-origin path that is safe to redirect to: `/…`, not `//host` or `/\host`.
    static func isLocalPath(_ path: String) -> Bool {
        path.hasPrefix("/") && !path.hasPrefix("//") && !path.hasPrefix("/\\") && !path.contains(where: { $0.isNewline || $0 == "\0" })
            && path.utf8.count <= 512
    }
}

extension HTTPField.Name {
    static let secFetchSite = Self("Sec-Fetch-Site")!
}
