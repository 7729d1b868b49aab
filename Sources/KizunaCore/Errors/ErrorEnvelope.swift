/// The wire shape of every error response: `{"error": {"code", "message", "field"?, "details"?}}`.
public struct ErrorEnvelope: Codable, Sendable {
    /// The error.
    public var error: Body

    /// The body of ``ErrorEnvelope``.
    public struct Body: Codable, Sendable {
        public var code: KizunaError.Code
        public var message: String
        public var field: String?
        public var details: [KizunaError.Detail]?
        public var retryAfter: Int?
    }

    /// Wraps an error for the wire.
    public init(_ error: KizunaError) {
        self.error = Body(
            code: error.code,
            message: error.message,
            field: error.field,
            details: error.details.isEmpty ? nil : error.details,
            retryAfter: error.retryAfter
        )
    }

    /// The error this envelope carries.
    public var kizunaError: KizunaError {
        KizunaError(error.code, error.message, field: error.field, details: error.details ?? [], retryAfter: error.retryAfter)
    }
}
