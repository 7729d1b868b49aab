import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import Testing

@testable import KizunaServer

/// A browser's part in the console's tests: it keeps the session cookie, sends forms URL-encoded from the server's
/// own origin (as a browser does, `Origin` included), and reads a page's CSRF token back from its forms.
struct ConsoleClient {
    let server: TestServer
    /// The session cookie as the server set it (`name=value`), once signed in.
    var cookie: String?
    /// The language cookie, once chosen with the switch.
    var language: String?

    init(_ server: TestServer) {
        self.server = server
    }

    /// The origin of this server's pages, as the test client names the server (`Host: localhost`).
    let origin = "http://localhost"

    /// Signs in with `token` and keeps the cookie; `#require`s that it worked.
    mutating func signIn(with token: String? = nil) async throws {
        let answer = try await post("/console/sign-in", ["token": token ?? server.adminToken])
        try #require(answer.status == .seeOther && answer.headers[.location] == "/console", "\(answer.status) \(answer.text)")
        let setCookie = try #require(answer.headers[values: .setCookie].first)
        cookie = String(try #require(setCookie.split(separator: ";").first))
    }

    func get(_ path: String, headers: HTTPFields = [:]) async throws -> TestResponse {
        try await server.send(.get, path, headers: headers.merging(cookies), authorized: false)
    }

    /// Posts `fields` as a form; `origin` nil sends none, as a client that is not a browser would.
    func post(_ path: String, _ fields: [String: String], origin: String?? = .none, headers: HTTPFields = [:]) async throws -> TestResponse {
        var headers = headers.merging(cookies)
        headers[.contentType] = "application/x-www-form-urlencoded"
        if let origin = origin ?? self.origin { headers[.origin] = origin }
        let body = fields.sorted { $0.key < $1.key }.map { "\(Self.encode($0.key))=\(Self.encode($0.value))" }.joined(separator: "&")
        return try await server.send(.post, path, headers: headers, authorized: false, body: body)
    }

    /// The CSRF token in the forms of the page at `path`.
    func csrf(on path: String = "/console/apps") async throws -> String {
        let page = try await get(path)
        return try #require(Self.csrf(in: page.text), "no CSRF field on \(path): \(page.status)")
    }

    static func csrf(in html: String) -> String? {
        guard let field = html.range(of: #"name="csrf" value=""#) else { return nil }
        return String(html[field.upperBound...].prefix { $0 != "\"" })
    }

    private var cookies: HTTPFields {
        let all = [cookie, language.map { "\(ConsoleController.languageCookie)=\($0)" }].compactMap { $0 }
        return all.isEmpty ? [:] : [.cookie: all.joined(separator: "; ")]
    }

    static func encode(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }
}

extension HTTPFields {
    fileprivate func merging(_ other: HTTPFields) -> HTTPFields {
        var merged = self
        for field in other where merged[field.name] == nil { merged.append(field) }
        return merged
    }
}
