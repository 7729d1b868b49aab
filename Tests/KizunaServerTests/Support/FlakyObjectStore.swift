import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import Synchronization
import Testing

/// A small S3 endpoint (Hummingbird, on a loopback port) that misbehaves on purpose: ``failure`` decides, from a
/// request and how many times the same one (method, path and query) came before, whether it is answered with an S3
/// error, held, or served. Served, it keeps plain PUT objects and answers ranged GETs, HEADs and DELETEs of them, and
/// plays a multipart upload (upload ids `upload-1`, `upload-2` …, a part's ETag `"part-N"`) without keeping its bytes.
final class FlakyObjectStore: Sendable {
    /// What a request gets instead of being served.
    enum Failure: Sendable {
        /// An answer with this status and an `<Error><Code>…</Code></Error>` body.
        case error(HTTPResponse.Status, code: String)
        /// Served (its effect kept), but its answer is held until the test ends: a store that applied a request whose
        /// answer never arrives.
        case applyAndHold
    }

    /// A request as the store saw it: `PUT /bucket/key?partNumber=1&uploadId=upload-1`.
    typealias Seen = String

    private let failure: @Sendable (_ request: Seen, _ attempt: Int) -> Failure?
    private let state = Mutex<State>(State())

    private struct State {
        var log: [Seen] = []
        var objects: [String: ByteBuffer] = [:]
        var uploads = 0
        var bodies: [Seen: String] = [:]
        /// The held answers, resumed when the test ends.
        var held: [CheckedContinuation<Void, Never>] = []
        var released = false
    }

    /// - Parameter failure: The failure for `request`'s `attempt`-th sending (1 for the first), `nil` to serve it.
    init(failure: @escaping @Sendable (_ request: Seen, _ attempt: Int) -> Failure?) {
        self.failure = failure
    }

    /// Every request, in the order they came.
    var log: [Seen] { state.withLock { $0.log } }

    /// The body of the last request seen as `request`.
    func body(of request: Seen) -> String? { state.withLock { $0.bodies[request] } }

    /// Runs the store while `body` runs with its endpoint (`http://127.0.0.1:PORT`).
    func run<R: Sendable>(_ body: @Sendable (String) async throws -> R) async throws -> R {
        let router = Router()
        for method in [HTTPRequest.Method.get, .head, .put, .post, .delete] {
            router.on("**", method: method) { request, _ in try await self.answer(request) }
        }
        var logger = Logger(label: "flaky-object-store")
        logger.logLevel = .warning
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)), logger: logger)
        return try await app.test(.live) { client in
            let port = try #require(client.port)
            defer { release() }
            return try await body("http://127.0.0.1:\(port)")
        }
    }

    private func answer(_ request: Request) async throws -> Response {
        let query = request.uri.query.map { "?" + $0 } ?? ""
        let seen = "\(request.method) \(request.uri.path)\(query)"
        let bytes = try await request.body.collect(upTo: 1 << 24)
        let attempt = state.withLock { state in
            state.log.append(seen)
            state.bodies[seen] = String(buffer: bytes)
            return state.log.count(where: { $0 == seen })
        }
        switch failure(seen, attempt) {
        case .error(let status, let code):
            return Response(status: status, body: ResponseBody(byteBuffer: ByteBuffer(string: "<Error><Code>\(code)</Code></Error>")))
        case .applyAndHold:
            _ = serve(request, path: request.uri.path, query: query, bytes: bytes)
            await hold()
            return Response(status: .internalServerError)
        case nil:
            return serve(request, path: request.uri.path, query: query, bytes: bytes)
        }
    }

    private func serve(_ request: Request, path: String, query: String, bytes: ByteBuffer) -> Response {
        switch (request.method, query) {
        case (.post, "?uploads"):
            let id = state.withLock { state in
                state.uploads += 1
                return "upload-\(state.uploads)"
            }
            return xml("<InitiateMultipartUploadResult><UploadId>\(id)</UploadId></InitiateMultipartUploadResult>")
        case (.post, _):
            return xml("<CompleteMultipartUploadResult><ETag>\"whole-3\"</ETag></CompleteMultipartUploadResult>")
        case (.put, ""):
            state.withLock { $0.objects[path] = bytes }
            return Response(status: .ok, headers: [.eTag: "\"object\""])
        case (.put, _):
            let number = query.split(separator: "&").first { $0.hasPrefix("?partNumber=") }?.dropFirst("?partNumber=".count) ?? "?"
            return Response(status: .ok, headers: [.eTag: "\"part-\(number)\""])
        case (.delete, _):
            state.withLock { $0.objects[path] = nil }
            return Response(status: .noContent)
        default:
            guard let object = state.withLock({ $0.objects[path] }) else {
                return Response(status: .notFound, body: ResponseBody(byteBuffer: ByteBuffer(string: "<Error><Code>NoSuchKey</Code></Error>")))
            }
            if request.method == .head { return Response(status: .ok, headers: [.contentLength: String(object.readableBytes)]) }
            guard let range = request.headers[.range], let bounds = Self.bounds(range) else {
                return Response(status: .ok, body: ResponseBody(byteBuffer: object))
            }
            let upper = min(bounds.upperBound, object.readableBytes)
            return Response(
                status: .partialContent, body: ResponseBody(byteBuffer: object.getSlice(at: bounds.lowerBound, length: upper - bounds.lowerBound)!))
        }
    }

    private func xml(_ text: String) -> Response {
        Response(status: .ok, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    /// `bytes=10-19` as `10..<20`.
    private static func bounds(_ header: String) -> Range<Int>? {
        let numbers = header.dropFirst("bytes=".count).split(separator: "-").compactMap { Int($0) }
        guard numbers.count == 2, numbers[0] <= numbers[1] else { return nil }
        return numbers[0]..<(numbers[1] + 1)
    }

    private func hold() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state in
                if !state.released { state.held.append(continuation) }
                return state.released
            }
            if now { continuation.resume() }
        }
    }

    /// Answers the held requests, so the server can shut down.
    private func release() {
        let held = state.withLock { state in
            state.released = true
            defer { state.held = [] }
            return state.held
        }
        for continuation in held { continuation.resume() }
    }
}
