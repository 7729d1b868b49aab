import Foundation
import KizunaCore

/// Why a data API call did not give the value asked for.
public enum DataError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No GraphQL answer came back: no network, a timeout, the server or its store unavailable (`retryAfter` set when
    /// the server said when to try again). Worth retrying; nothing was done, or it is unknown whether it was.
    case transport(KizunaError)
    /// The server answered with errors, each with its stable code; `data` holds what it could answer (a partial answer),
    /// if anything. Trying again unchanged gives the same answer, unless the code says otherwise (``GraphQLError/code``).
    case graphQL([GraphQLError], data: [String: JSONValue]?)
    /// The answer did not decode as the type asked for: the app's type does not match what its document selects.
    case decoding(String)

    /// The first error's code: `transport` or `timeout`, the server's code, or `corrupted` for an undecodable answer.
    public var code: KizunaError.Code {
        switch self {
        case .transport(let error): error.code
        case .graphQL(let errors, _): errors.first?.code ?? .internalError
        case .decoding: .corrupted
        }
    }

    public var description: String {
        switch self {
        case .transport(let error): "transport: \(error)"
        case .graphQL(let errors, _): errors.map(\.description).joined(separator: "\n")
        case .decoding(let message): "decoding: \(message)"
        }
    }
}

/// One error of a GraphQL answer: its message, where it happened, and Kizuna's `extensions` — `code` always, and
/// more for some codes (`field` and `details` for `validation_failed`, `limit` and `maximum` for `limit_exceeded`, the
/// stored record for `conflict`).
public struct GraphQLError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String
    /// The response path of the field that failed (names and list indexes), if the error belongs to one.
    public var path: [JSONValue]?
    /// Everything under `extensions`.
    public var extensions: [String: JSONValue]

    public init(message: String, path: [JSONValue]? = nil, extensions: [String: JSONValue] = [:]) {
        self.message = message
        self.path = path
        self.extensions = extensions
    }

    init(_ json: JSONValue) {
        message = json["message"]?.stringValue ?? "The server gave no message."
        path = json["path"]?.arrayValue
        extensions = json["extensions"]?.objectValue ?? [:]
    }

    /// `extensions.code`, one of ``KizunaError/Code``'s (`internal_error` when the server gave none).
    public var code: KizunaError.Code { extensions["code"]?.stringValue.map(KizunaError.Code.init(rawValue:)) ?? .internalError }

    /// `extensions.field`: the input field a `validation_failed` error is about.
    public var field: String? { extensions["field"]?.stringValue }

    /// The error as a ``KizunaError``, as the rest of the SDK throws them.
    public var kizunaError: KizunaError {
        let details = (extensions["details"]?.arrayValue ?? []).compactMap { detail -> KizunaError.Detail? in
            guard let code = detail["code"]?.stringValue, let message = detail["message"]?.stringValue else { return nil }
            return KizunaError.Detail(code: code, message: message, field: detail["field"]?.stringValue)
        }
        return KizunaError(code, message, field: field, details: details, retryAfter: extensions["retryAfter"]?.numberValue.map { Int($0) })
    }

    public var description: String {
        guard let path else { return "\(code.rawValue): \(message)" }
        let place = path.map { $0.stringValue ?? $0.numberValue.map { String(Int($0)) } ?? "?" }.joined(separator: ".")
        return "\(code.rawValue): \(message) (at \(place))"
    }
}

/// A GraphQL answer as the server sent it: `data`, `errors`, or both.
public struct GraphQLResponse: Sendable, Hashable {
    public var data: [String: JSONValue]?
    public var errors: [GraphQLError]

    public init(data: [String: JSONValue]?, errors: [GraphQLError] = []) {
        self.data = data
        self.errors = errors
    }

    /// Reads an HTTP answer: GraphQL's shape at any status (the server answers 401, 403 and 503 in it too), or
    /// Kizuna's error envelope (an app that does not exist, a body the server could not read).
    init(_ reply: KizunaHTTPClient.Reply) throws(DataError) {
        let what = "The data API's answer (HTTP \(reply.status))"
        guard let json = try? KizunaHTTPClient.decoder.decode(JSONValue.self, from: reply.body), case .object(let body) = json else {
            throw .transport(KizunaError(.transport, "\(what) is not JSON."))
        }
        if body["data"] == nil, body["errors"] == nil {
            guard var error = try? KizunaHTTPClient.decoder.decode(ErrorEnvelope.self, from: reply.body).kizunaError else {
                throw .transport(KizunaError(.transport, "\(what) is neither a GraphQL answer nor a Kizuna error."))
            }
            if error.retryAfter == nil { error.retryAfter = reply.headers["retry-after"].flatMap { Int($0) } }
            throw (500..<600).contains(reply.status) ? .transport(error) : .graphQL([GraphQLError(kizuna: error)], data: nil)
        }
        data = body["data"]?.objectValue
        errors = (body["errors"]?.arrayValue ?? []).map(GraphQLError.init)
        // A store that cannot be reached (503, with Retry-After) answered nothing: a transport failure, to retry.
        if reply.status == 503, let first = errors.first {
            var error = first.kizunaError
            error.retryAfter = error.retryAfter ?? reply.headers["retry-after"].flatMap { Int($0) }
            throw .transport(error)
        }
    }
}

extension GraphQLError {
    init(kizuna error: KizunaError) {
        var extensions: [String: JSONValue] = ["code": .string(error.code.rawValue)]
        if let field = error.field { extensions["field"] = .string(field) }
        self.init(message: error.message, extensions: extensions)
    }
}
