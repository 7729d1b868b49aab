import Foundation
import KizunaCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends JSON requests to a Kizuna server and turns its error responses back into ``KizunaError``.
///
/// Every failure surfaces as a `KizunaError`: server errors keep their code and message; a server that cannot be
/// reached, times out or answers something that is not Kizuna's becomes `transport`.
public struct KizunaHTTPClient: Sendable {
    /// The server's base URL, such as `http://127.0.0.1:8080`.
    public let baseURL: URL
    /// The bearer token sent with every request, if any.
    public let token: String?
    /// How long a request may take.
    public let timeout: TimeInterval
    private let session: URLSession

    /// Creates a client.
    /// - Parameters:
    ///   - baseURL: The server's base URL.
    ///   - token: A bearer token (an admin token for admin routes).
    ///   - timeout: Per-request timeout in seconds (default 30).
    ///   - session: The URL session to use.
    public init(baseURL: URL, token: String? = nil, timeout: TimeInterval = 30, session: URLSession = .shared) {
        self.baseURL = baseURL
        self.token = token
        self.timeout = timeout
        self.session = session
    }

    /// Sends a request and decodes a JSON response.
    /// - Parameters:
    ///   - method: The HTTP method.
    ///   - path: A path starting with `/`.
    ///   - body: A value to send as JSON.
    /// - Throws: `KizunaError` with the server's code, or `transport`.
    public func send<Response: Decodable>(
        _ method: String,
        _ path: String,
        body: (some Encodable)? = Optional<Never>.none,
        as: Response.Type = Response.self
    ) async throws(KizunaError) -> Response {
        let data = try await sendRaw(method, path, body: body)
        do {
            return try Self.decoder.decode(Response.self, from: data)
        } catch {
            throw KizunaError(.transport, "The server's answer to \(method) \(path) could not be read: \(error)")
        }
    }

    /// Sends a request whose response has no body of interest.
    public func send(_ method: String, _ path: String, body: (some Encodable)? = Optional<Never>.none) async throws(KizunaError) {
        _ = try await sendRaw(method, path, body: body)
    }

    private func sendRaw(_ method: String, _ path: String, body: (some Encodable)?) async throws(KizunaError) -> Data {
        guard let url = URL(string: path, relativeTo: baseURL) else {
            throw KizunaError(.badRequest, "'\(path)' is not a valid path.")
        }
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = method
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            do {
                request.httpBody = try Self.encoder.encode(body)
            } catch {
                throw KizunaError(.badRequest, "The request body could not be encoded: \(error)")
            }
        }
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(for: request)
        } catch {
            throw KizunaError(.transport, "Could not reach \(baseURL.absoluteString): \(error.localizedDescription)")
        }
        guard let http = response as? HTTPURLResponse else {
            throw KizunaError(.transport, "The answer from \(baseURL.absoluteString) was not HTTP.")
        }
        guard (200..<300).contains(http.statusCode) else {
            if let envelope = try? Self.decoder.decode(ErrorEnvelope.self, from: data) {
                throw envelope.kizunaError
            }
            throw KizunaError(.transport, "\(method) \(path) answered HTTP \(http.statusCode) without a Kizuna error body.")
        }
        return data
    }

    static let encoder = WireFormat.encoder()
    static let decoder = WireFormat.decoder()
}
