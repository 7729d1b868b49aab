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

    /// The fields the form posting to `action` on `html` sends, as a browser would: every named input (a checkbox
    /// or radio only when checked), text area and select (its selected option, else its first).
    static func fields(of html: String, action: String) throws -> [String: String] {
        let start = try #require(html.range(of: #"<form method="post" action="\#(action)""#), "no form posting to \(action)")
        let end = try #require(html.range(of: "</form>", range: start.upperBound..<html.endIndex))
        let form = String(html[start.upperBound..<end.lowerBound])
        func attribute(_ name: String, in tag: Substring) -> String? {
            guard let found = tag.range(of: #" \#(name)=""#) else { return nil }
            return unescape(String(tag[found.upperBound...].prefix { $0 != "\"" }))
        }
        var fields: [String: String] = [:]
        var rest = Substring(form)
        while let open = rest.range(of: "<") {
            rest = rest[open.upperBound...]
            let tag = rest.prefix { $0 != ">" }
            let kind = tag.prefix { $0.isLetter }
            guard ["input", "textarea", "select"].contains(kind), let name = attribute("name", in: tag) else { continue }
            switch kind {
            case "input":
                let type = attribute("type", in: tag) ?? "text"
                if ["checkbox", "radio"].contains(type), !tag.contains(" checked") { continue }
                fields[name] = attribute("value", in: tag) ?? (type == "checkbox" ? "on" : "")
            case "textarea":
                let body = rest.dropFirst(tag.count + 1)
                fields[name] = unescape(String(body[..<(body.range(of: "</textarea>")?.lowerBound ?? body.endIndex)]))
            default:
                let body = rest.dropFirst(tag.count + 1)
                let options = body[..<(body.range(of: "</select>")?.lowerBound ?? body.endIndex)].components(separatedBy: "<option").dropFirst()
                let chosen = options.first { $0.prefix { $0 != ">" }.contains(" selected") } ?? options.first ?? ""
                let head = Substring(chosen.prefix { $0 != ">" })
                fields[name] = attribute("value", in: head) ?? unescape(String(chosen.drop { $0 != ">" }.dropFirst().prefix { $0 != "<" }))
            }
        }
        return fields
    }

    static func unescape(_ text: String) -> String {
        [("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&#39;", "'"), ("&amp;", "&")].reduce(text) {
            $0.replacingOccurrences(of: $1.0, with: $1.1)
        }
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
