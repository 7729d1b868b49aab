import Foundation
import KizunaCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends JSON requests to a Kizuna server and turns its error responses back into ``KizunaError``.
///
/// Every failure surfaces as a `KizunaError`: server errors keep their code and message (and `retryAfter` for
/// throttling); a server that cannot be reached or answers something that is not Kizuna's becomes `transport`;
/// a request that outlives ``timeout`` becomes `timeout`. The timeout is a deadline for the whole exchange, not
/// an idle timer, so a server that trickles bytes cannot hold a caller past it.
public struct KizunaHTTPClient: Sendable {
    /// The server's base URL, such as `http://127.0.0.1:8080`.
    public let baseURL: URL
    /// The bearer token sent with every request, if any.
    public let token: String?
    /// The most a request may take, from sending to the last byte of the answer.
    public let timeout: Duration
    let session: URLSession
    /// Supplies a bearer token per request when ``token`` is absent: the signed-in account's, for ``KizunaApp``.
    var authorization: (@Sendable () async throws(KizunaError) -> String?)?

    /// Creates a client.
    /// - Parameters:
    ///   - baseURL: The server's base URL.
    ///   - token: A bearer token (an admin token for admin routes).
    ///   - timeout: The deadline for each request (default 30 seconds).
    ///   - session: The URL session to use.
    public init(baseURL: URL, token: String? = nil, timeout: Duration = .seconds(30), session: URLSession = .shared) {
        self.baseURL = baseURL
        self.token = token
        self.timeout = timeout
        self.session = session
    }

    /// One answer: its status, headers and body. Only 2xx and 304 get this far; other statuses throw.
    public struct Reply: Sendable {
        /// The HTTP status.
        public var status: Int
        /// The response headers, by lower-case name.
        public var headers: [String: String]
        /// The body.
        public var body: Data

        /// Decodes the body as Kizuna JSON.
        public func decode<Value: Decodable>(_ type: Value.Type, what: String) throws(KizunaError) -> Value {
            do {
                return try KizunaHTTPClient.decoder.decode(Value.self, from: body)
            } catch {
                throw KizunaError(.transport, "The server's answer to \(what) could not be read: \(error)")
            }
        }
    }

    /// Sends a request and decodes a JSON response.
    /// - Parameters:
    ///   - method: The HTTP method.
    ///   - path: A path starting with `/`.
    ///   - body: A value to send as JSON.
    ///   - headers: Extra request headers, such as `If-Match`.
    /// - Throws: `KizunaError` with the server's code, `transport` or `timeout`.
    public func send<Response: Decodable>(
        _ method: String,
        _ path: String,
        body: (some Encodable)? = Optional<Never>.none,
        headers: [String: String] = [:],
        as: Response.Type = Response.self
    ) async throws(KizunaError) -> Response {
        try await exchange(method, path, body: body, headers: headers).decode(Response.self, what: "\(method) \(path)")
    }

    /// Sends a request whose response has no body of interest.
    public func send(
        _ method: String, _ path: String, body: (some Encodable)? = Optional<Never>.none, headers: [String: String] = [:]
    )
        async throws(KizunaError)
    {
        _ = try await exchange(method, path, body: body, headers: headers)
    }

    /// Sends a request and returns the raw answer (2xx or 304).
    /// - Throws: `KizunaError` with the server's code, `transport` or `timeout`.
    public func exchange(
        _ method: String,
        _ path: String,
        body: (some Encodable)? = Optional<Never>.none,
        headers: [String: String] = [:]
    ) async throws(KizunaError) -> Reply {
        var request = try makeRequest(method, path, headers: headers)
        if token == nil, headers["Authorization"] == nil, let authorization, let bearer = try await authorization() {
            request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization")
        }
        if let body {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            do {
                request.httpBody = try Self.encoder.encode(body)
            } catch {
                throw KizunaError(.badRequest, "The request body could not be encoded: \(error)")
            }
        }
        let (data, http) = try await perform(request, what: "\(method) \(path)")
        guard (200..<300).contains(http.statusCode) || http.statusCode == 304 else {
            throw Self.error(status: http.statusCode, headers: http, body: data, what: "\(method) \(path)")
        }
        return Reply(status: http.statusCode, headers: Self.headers(of: http), body: data)
    }

    /// Sends a request whose answers of every status have a body the caller reads itself (GraphQL over HTTP answers
    /// errors in GraphQL's shape, 4xx and 5xx included); only a failure to get an answer at all throws.
    func exchangeAnyStatus(
        _ method: String, _ path: String, body: Data?, headers: [String: String] = [:], timeout: Duration? = nil
    ) async throws(KizunaError) -> Reply {
        var request = try makeRequest(method, path, headers: headers)
        if token == nil, headers["Authorization"] == nil, let authorization, let bearer = try await authorization() {
            request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization")
        }
        if body != nil, headers["Content-Type"] == nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
        if let timeout { request.timeoutInterval = timeout.seconds }
        request.httpBody = body
        let (data, http) = try await perform(request, what: "\(method) \(path)", timeout: timeout)
        return Reply(status: http.statusCode, headers: Self.headers(of: http), body: data)
    }

    /// Sends `data` as it is (or no body), with `timeout` for this request alone, and returns the raw answer (2xx
    /// only): artifact chunks, up and down.
    /// - Throws: `KizunaError` with the server's code, `transport` or `timeout`.
    func exchange(
        _ method: String, _ path: String, data: Data?, headers: [String: String] = [:], timeout: Duration
    ) async throws(KizunaError) -> Reply {
        let reply = try await exchangeAnyStatus(method, path, body: data, headers: headers, timeout: timeout)
        guard (200..<300).contains(reply.status) else {
            throw Self.error(status: reply.status, headers: reply.headers, body: reply.body, what: "\(method) \(path)")
        }
        return reply
    }

    func makeRequest(_ method: String, _ path: String, headers: [String: String] = [:]) throws(KizunaError) -> URLRequest {
        guard let url = URL(string: path, relativeTo: baseURL) else {
            throw KizunaError(.badRequest, "'\(path)' is not a valid path.")
        }
        var request = URLRequest(url: url, timeoutInterval: timeout.seconds)
        request.httpMethod = method
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let token, !token.isEmpty { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }

    /// Runs the request under the deadline: the first of the exchange, the timer and the caller's cancellation
    /// decides.
    private func perform(_ request: URLRequest, what: String, timeout: Duration? = nil) async throws(KizunaError) -> (Data, HTTPURLResponse) {
        let session = session
        let timeout = timeout ?? self.timeout
        let first = FirstOf<Result<(Data, URLResponse), any Error>?>()
        let exchange = Task { () async -> Void in
            do { first.offer(.success(try await session.data(for: request))) } catch { first.offer(.failure(error)) }
        }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            first.offer(nil)
        }
        let outcome = await withTaskCancellationHandler {
            await first.wait()
        } onCancel: {
            first.offer(.failure(CancellationError()))
        }
        timer.cancel()
        #if canImport(FoundationNetworking)
            // FoundationNetworking crashes the process ("Trying to access a behaviour for a task that in not in the
            // registry") when a task is cancelled while it is failing, as one through a refused connection does at
            // once: there the exchange is left to end by itself, within the request's own timeout.
            _ = exchange
        #else
            exchange.cancel()
        #endif
        switch outcome {
        case nil:
            throw KizunaError(.timeout, "\(what) got no answer from \(baseURL.absoluteString) within \(timeout.seconds) seconds.")
        case .failure(let error):
            if Task.isCancelled { throw KizunaError(.transport, "\(what) was cancelled.") }
            if (error as? URLError)?.code == .timedOut {
                throw KizunaError(.timeout, "\(what) got no answer from \(baseURL.absoluteString) within \(timeout.seconds) seconds.")
            }
            throw KizunaError(.transport, "Could not reach \(baseURL.absoluteString): \(error.localizedDescription)")
        case .success(let (data, response)):
            guard let http = response as? HTTPURLResponse else {
                throw KizunaError(.transport, "The answer from \(baseURL.absoluteString) was not HTTP.")
            }
            return (data, http)
        }
    }

    /// The error an answer with a failing status stands for: the server's envelope, with `Retry-After` filled
    /// in from the header when the body leaves it out.
    static func error(status: Int, headers: HTTPURLResponse, body: Data, what: String) -> KizunaError {
        error(status: status, retryAfter: headers.value(forHTTPHeaderField: "Retry-After"), body: body, what: what)
    }

    /// The same, from a ``Reply``'s headers.
    static func error(status: Int, headers: [String: String], body: Data, what: String) -> KizunaError {
        error(status: status, retryAfter: headers["retry-after"], body: body, what: what)
    }

    private static func error(status: Int, retryAfter header: String?, body: Data, what: String) -> KizunaError {
        guard var error = try? decoder.decode(ErrorEnvelope.self, from: body).kizunaError else {
            return KizunaError(.transport, "\(what) answered HTTP \(status) without a Kizuna error body.")
        }
        if error.retryAfter == nil, let header, let seconds = Int(header) { error.retryAfter = seconds }
        return error
    }

    static func headers(of response: HTTPURLResponse) -> [String: String] {
        var headers: [String: String] = [:]
        for case (let name as String, let value as String) in response.allHeaderFields { headers[name.lowercased()] = value }
        return headers
    }

    static let encoder = WireFormat.encoder()
    static let decoder = WireFormat.decoder()
}

extension Duration {
    /// The duration in seconds, as Foundation wants it.
    var seconds: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}

/// The first of several values offered from anywhere, for one waiter: a race whose losers are ignored rather than
/// cancelled.
final class FirstOf<Value: Sendable>: Sendable {
    private struct State {
        var waiter: CheckedContinuation<Value, Never>?
        var value: Value?
        var decided = false
    }

    private let state = Locked(State())

    /// The first value offered, now or when it comes.
    func wait() async -> Value {
        await withCheckedContinuation { waiter in
            let ready = state.withLock { state -> Value? in
                if let value = state.value { return value }
                state.waiter = waiter
                return nil
            }
            if let ready { waiter.resume(returning: ready) }
        }
    }

    /// Offers a value; only the first counts.
    func offer(_ value: Value) {
        let waiter = state.withLock { state -> CheckedContinuation<Value, Never>? in
            guard !state.decided else { return nil }
            state.decided = true
            state.value = value
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: value)
    }
}
