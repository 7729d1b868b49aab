import Foundation
import HTTPTypes
import Hummingbird
import KizunaCore
import Logging
import NIOCore
import NIOHTTP1

/// Turns every error into the standard JSON shape (in ``EdgeMiddleware``); the one place error codes map to HTTP
/// statuses.
///
/// Unknown errors are logged with the request id and answered `500 internal_error` with no internals. That includes a
/// `DecodingError` that reaches here: request bodies are decoded by ``JSONRequestDecoder``, which names the bad path,
/// so any other decoding failure (a stored row that no longer decodes, say) is the server's fault, not the client's.
struct ErrorResponder: Sendable {
    /// For telling a wrong method (405) from an unknown path (404).
    let allowedMethods: AllowedMethods

    /// The answer for an error a handler threw.
    func response(to error: any Error, request: Request, context: KizunaRequestContext) -> Response {
        let (kizunaError, headers) = translate(error, request: request, context: context)
        return Self.response(for: kizunaError, headers: headers)
    }

    private func translate(_ error: any Error, request: Request, context: KizunaRequestContext) -> (KizunaError, HTTPFields) {
        switch error {
        case let error as KizunaError where error.code == .internalError:
            // Its message is for the log (an errno, a file the store could not write), never for the client.
            context.logger.error("Internal error", metadata: ["error": "\(error.message)"])
            return (KizunaError(.internalError, "Something went wrong on the server; the request id is \(context.id)."), [:])
        case let error as KizunaError:
            var headers = HTTPFields()
            if error.code == .unauthorized { headers[.wwwAuthenticate] = #"Bearer realm="kizuna""# }
            if error.code == .sessionExpired { headers[.wwwAuthenticate] = #"Bearer realm="kizuna", error="invalid_token""# }
            if let retryAfter = error.retryAfter { headers[.retryAfter] = String(retryAfter) }
            return (error, headers)
        case let error as any HTTPResponseError where error.status == .notFound:
            let allowed = allowedMethods.methods(matching: request.uri.path)
            guard !allowed.isEmpty else {
                return (KizunaError(.notFound, "No route for \(request.method) \(request.uri.path)."), [:])
            }
            let allow = allowed.map(\.rawValue).joined(separator: ", ")
            return (
                KizunaError(.methodNotAllowed, "\(request.method) is not allowed on \(request.uri.path); use \(allow)."),
                [.allow: allow]
            )
        case let error as any HTTPResponseError where error.status == .contentTooLarge:
            return (KizunaError(.payloadTooLarge, "The request body is too large."), [:])
        case let error as any HTTPResponseError where error.status.code < 500:
            return (KizunaError(.badRequest, "The request was not understood (\(error.status.code) \(error.status.reasonPhrase))."), [:])
        case let error as HTTPParserError:
            // Bad framing (a chunk size that is not hex or too big, a body cut short) is the client's fault.
            context.logger.info("Malformed HTTP request", metadata: ["error": "\(error)"])
            return (
                KizunaError(.badRequest, "The request is malformed HTTP: \(Self.describe(error)).", field: "body"),
                [.connection: "close"]
            )
        case let error where StoreFailure.isUnreachable(error):
            context.logger.warning("The store cannot be reached", metadata: ["error": "\(String(reflecting: error))"])
            return (
                KizunaError(
                    .storeUnavailable, "The server cannot reach its store right now; retry in a few seconds.", retryAfter: StoreFailure.retryAfter),
                [.retryAfter: String(StoreFailure.retryAfter)]
            )
        default:
            context.logger.error("Unhandled error", metadata: ["error": "\(String(reflecting: error))"])
            return (KizunaError(.internalError, "Something went wrong on the server; the request id is \(context.id)."), [:])
        }
    }

    /// What is wrong with a request the HTTP parser refused, in words for the client.
    private static func describe(_ error: HTTPParserError) -> String {
        switch error {
        case .invalidChunkSize: "a chunk size is not a hexadecimal number or is too large"
        case .invalidEOFState: "the connection ended before the body did (shorter than Content-Length, or a truncated chunked body)"
        case .invalidContentLength: "Content-Length is not a valid length"
        case .unexpectedContentLength: "Content-Length conflicts with Transfer-Encoding"
        case .headerOverflow: "the header is too large"
        case .invalidMethod: "the method is not valid"
        case .invalidHeaderToken: "a header field is not valid"
        default: "it does not follow HTTP/1.1's framing"
        }
    }

    /// The response for an error: its status, `application/json` and the envelope.
    static func response(for error: KizunaError, headers: HTTPFields = [:]) -> Response {
        // Encoding a struct of strings cannot fail; the fallback keeps this function total all the same.
        (try? .json(ErrorEnvelope(error), status: status(for: error.code), headers: headers))
            ?? .empty(.internalServerError)
    }

    /// The HTTP status each error code answers with.
    static func status(for code: KizunaError.Code) -> HTTPResponse.Status {
        switch code {
        case .badRequest, .validationFailed, .badCursor, .limitExceeded: .badRequest
        case .unauthorized, .invalidCredentials, .sessionExpired, .apiKeyExpired, .apiKeyRevoked: .unauthorized
        case .accountDisabled: .forbidden
        case .forbidden: .forbidden
        case .notFound: .notFound
        case .methodNotAllowed: .methodNotAllowed
        case .conflict, .destructiveChange, .conditionFailed: .conflict
        case .syncExpired: .gone
        case .preconditionFailed: .preconditionFailed
        case .payloadTooLarge: .contentTooLarge
        case .rateLimited, .throttled: .tooManyRequests
        case .preconditionRequired: .preconditionRequired
        case .unavailable, .storeTooNew, .storeUnavailable: .serviceUnavailable
        default: .internalServerError
        }
    }
}
