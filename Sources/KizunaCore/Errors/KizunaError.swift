/// An error with a stable, machine-readable code and a message a person can act on.
///
/// The server answers every failed request with this shape (see ``ErrorEnvelope``) and the SDK throws it back,
/// so an app can `switch` on ``code`` without parsing messages.
public struct KizunaError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, stable across releases.
    public var code: Code
    /// A human-readable explanation; never contains server internals.
    public var message: String
    /// The input field or JSON path the error is about, when there is one.
    public var field: String?
    /// Every individual problem when a request had several (for example a validation run).
    public var details: [Detail]
    /// For `throttled` and `rate_limited`: how many seconds to wait before trying again.
    public var retryAfter: Int?

    /// Creates an error.
    /// - Parameters:
    ///   - code: The stable code.
    ///   - message: A message a person can act on.
    ///   - field: The field or JSON path the error is about.
    ///   - details: Individual problems, when there are several.
    ///   - retryAfter: Seconds to wait before retrying, for throttling errors.
    public init(_ code: Code, _ message: String, field: String? = nil, details: [Detail] = [], retryAfter: Int? = nil) {
        self.code = code
        self.message = message
        self.field = field
        self.details = details
        self.retryAfter = retryAfter
    }

    /// `not_found` for an app id that is not registered (or was deleted), naming the id and where to look.
    /// - Parameter id: The app id the request named.
    public static func noSuchApp(_ id: String) -> KizunaError {
        KizunaError(.notFound, "There is no app with id '\(id)'; `kizuna app list` shows the registered ones.", field: "app")
    }

    public var description: String {
        var text = "\(code.rawValue): \(message)"
        if let field { text += " (field: \(field))" }
        for detail in details {
            // A text document's problem also says where it is, so a CLI user can jump to it.
            let place = detail.line.map { line in "line \(line)\(detail.column.map { ", column \($0)" } ?? ""): " } ?? ""
            text += "\n  - \(detail.field.map { "\($0): " } ?? "")\(place)\(detail.message)"
        }
        return text
    }

    /// One problem among several, for example one failed validation rule.
    public struct Detail: Codable, Hashable, Sendable {
        /// The stable code of this problem.
        public var code: String
        /// A message a person can act on.
        public var message: String
        /// The field the problem is about.
        public var field: String?
        /// The 1-based line in the submitted text where the problem is, for documents people write as text (a data
        /// schema's SDL); `nil` for JSON input, whose ``field`` path already says where.
        public var line: Int?
        /// The 1-based column on ``line``, counted in characters; `nil` when ``line`` is.
        public var column: Int?

        /// Creates a detail.
        /// - Parameters:
        ///   - code: The stable code of this problem.
        ///   - message: A message a person can act on.
        ///   - field: The field the problem is about.
        ///   - line: The 1-based line in a text document, when the input is one.
        ///   - column: The 1-based column on that line.
        public init(code: String, message: String, field: String? = nil, line: Int? = nil, column: Int? = nil) {
            self.code = code
            self.message = message
            self.field = field
            self.line = line
            self.column = column
        }
    }

    /// A stable error code. Unknown codes from a newer server decode as themselves.
    public struct Code: RawRepresentable, Codable, Hashable, Sendable, ExpressibleByStringLiteral {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(stringLiteral value: String) { self.rawValue = value }
        public init(from decoder: any Decoder) throws { self.rawValue = try decoder.singleValueContainer().decode(String.self) }
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(rawValue)
        }
    }
}

extension KizunaError.Code {
    /// The request body or a parameter is malformed (bad JSON, wrong type).
    public static let badRequest: Self = "bad_request"
    /// The input is well-formed but breaks a rule; see `details`.
    public static let validationFailed: Self = "validation_failed"
    /// No or an invalid credential.
    public static let unauthorized: Self = "unauthorized"
    /// The credential is valid but not allowed to do this.
    public static let forbidden: Self = "forbidden"
    /// The addressed thing does not exist.
    public static let notFound: Self = "not_found"
    /// The route exists but not for this HTTP method.
    public static let methodNotAllowed: Self = "method_not_allowed"
    /// The thing already exists.
    public static let conflict: Self = "conflict"
    /// A data schema publish would drop or narrow what is stored; publish with `allowDestructive` to do it anyway.
    public static let destructiveChange: Self = "destructive_change"
    /// A `nextToken` the server did not issue, altered or cut short, or issued for another query (another model,
    /// order, filter or key); list again from the first page.
    public static let badCursor: Self = "bad_cursor"
    /// A data mutation's `condition` does not hold for the stored record; nothing was written.
    public static let conditionFailed: Self = "condition_failed"
    /// A data sync's `since` is older than the tombstone retention: deletions it would need may be gone. Sync again
    /// from the start (without `since`) and replace the local copy.
    public static let syncExpired: Self = "sync_expired"
    /// A request is larger than a limit of the server allows (a GraphQL document too deep or too costly, a page too
    /// large, too many mutations at once); it cannot succeed as is, so make it smaller. The data API names the limit
    /// in `extensions.limit`, with `maximum` and `actual`.
    public static let limitExceeded: Self = "limit_exceeded"
    /// A precondition (such as `If-Match`) failed.
    public static let preconditionFailed: Self = "precondition_failed"
    /// The request body is larger than the server accepts.
    public static let payloadTooLarge: Self = "payload_too_large"
    /// Too many requests; retry after the time the response says.
    public static let rateLimited: Self = "rate_limited"
    /// One install fetched or checked too often; wait ``KizunaError/retryAfter`` seconds (429).
    public static let throttled: Self = "throttled"
    /// A write that must name the version it replaces came without `If-Match` (428).
    public static let preconditionRequired: Self = "precondition_required"
    /// The server is starting or migrating its store; retry shortly.
    public static let unavailable: Self = "unavailable"
    /// The server cannot reach its store (PostgreSQL down or restarting, say); retry after ``KizunaError/retryAfter``
    /// seconds (503). Another instance may be able to answer.
    public static let storeUnavailable: Self = "store_unavailable"
    /// Something failed on the server; the message carries no internals.
    public static let internalError: Self = "internal_error"
    /// The store was written by a newer Kizuna than this one.
    public static let storeTooNew: Self = "store_too_new"
    /// The server could not be reached or answered something that is not Kizuna's.
    public static let transport: Self = "transport"
    /// Stored data failed its integrity check: it was altered, or it is read with the wrong key (SDK only).
    public static let corrupted: Self = "corrupted"
    /// Client-side: a signed document (a gate mirror) is not signed by a trusted key, or was altered.
    public static let badSignature: Self = "bad_signature"
    /// The server did not answer within the client's timeout (raised by the SDK, never sent by the server).
    public static let timeout: Self = "timeout"
}
