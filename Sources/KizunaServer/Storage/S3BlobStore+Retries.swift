import Crypto
import Foundation
import KizunaCore
import NIOCore
import NIOHTTP1

/// How ``S3BlobStore`` repeats a request that failed in a way a retry can fix: the connection failed or timed out,
/// or S3 answered 500, 502, 503 or 504, or with `SlowDown`, `RequestTimeout` or `InternalError` — S3's own advice for
/// those, and what keeps one reset connection from failing a multi-gigabyte upload. Other answers (a 403, a 404) are
/// final: a retry would get the same.
///
/// Every request the store sends may be repeated: PUT object, UploadPart under the same number, GET, HEAD, DELETE,
/// AbortMultipartUpload and CompleteMultipartUpload leave the same state once or twice; CreateMultipartUpload, the
/// exception, at worst leaves an unused upload id (see ``S3BlobStore/createMultipartUpload(_:)``).
package struct S3Retries: Sendable, Hashable {
    /// Tries in all, the first one included (1: no retry).
    package var attempts: Int
    /// The wait before each retry: exponential from its base, with jitter, so that instances throttled together do
    /// not come back together. (The SDK's reconnect backoff, whose formula serves here as well.)
    package var backoff: GraphQLWSReconnectBackoff

    /// - Parameters:
    ///   - attempts: Tries in all (at least 1).
    ///   - backoff: The wait before retry `n`: 200–400 ms, then 400–800 ms, by default, and at most 5 s.
    package init(attempts: Int = 3, backoff: GraphQLWSReconnectBackoff = GraphQLWSReconnectBackoff(base: .milliseconds(400), maximum: .seconds(5))) {
        self.attempts = max(attempts, 1)
        self.backoff = backoff
    }

    /// The S3 error codes that mean "try again", whatever the status they come with.
    static let retriedCodes: Set<String> = ["SlowDown", "RequestTimeout", "InternalError"]
    static let retriedStatuses: Set<UInt> = [500, 502, 503, 504]

    /// Whether `response` is a failure a retry can fix; `errorsIn200` for a request S3 may fail with a 200 whose body
    /// is an `<Error>` (CompleteMultipartUpload), where any other answer's body is data and never read here.
    static func isTransient(_ response: ObjectStoreConnection.Response, errorsIn200: Bool) -> Bool {
        if retriedStatuses.contains(response.status.code) { return true }
        guard response.status.code >= 300 || errorsIn200 else { return false }
        return S3BlobStore.element("Code", in: response.body).map(retriedCodes.contains) ?? false
    }
}

extension S3BlobStore {
    /// Sends one signed request for `key` (the bucket itself when `nil`), again as ``retries`` says while it fails in a
    /// way a retry can fix; the last answer is returned (a 503 after the last try, say) for the caller to judge.
    /// - Parameter errorsIn200: Whether S3 may answer this request 200 with an error in the body.
    /// - Throws: `store_unavailable` when the store could not be reached or did not answer in time, on every try.
    func send(
        _ method: HTTPMethod, _ key: String?, query: [(String, String)] = [], headers extra: [(String, String)] = [], body: ByteBuffer? = nil,
        errorsIn200: Bool = false
    ) async throws -> ObjectStoreConnection.Response {
        let path = connection.basePath + "/" + bucket + (key.map { "/" + $0 } ?? "")
        // The body's SHA-256 is signed: computed once, however many tries.
        let payloadHash = body.map { buffer in buffer.withUnsafeReadableBytes { hex(SHA256.hash(data: $0)) } } ?? SigV4Signer.emptyPayload
        let queryText = query.map {
            $0.1.isEmpty
                ? SigV4Signer.encode($0.0, keepSlash: false)
                : "\(SigV4Signer.encode($0.0, keepSlash: false))=\(SigV4Signer.encode($0.1, keepSlash: false))"
        }
        let target = SigV4Signer.encode(path, keepSlash: true) + (queryText.isEmpty ? "" : "?" + queryText.joined(separator: "&"))
        var attempt = 1
        while true {
            do {
                // Signed at each try: a retry's x-amz-date is its own, not the first try's.
                let amzDate = SigV4Signer.amzDate(Date())
                let signed = [("Host", connection.hostHeader), ("x-amz-content-sha256", payloadHash), ("x-amz-date", amzDate)] + extra
                let request = SigV4Signer.Request(method: method.rawValue, path: path, query: query, headers: signed, payloadHash: payloadHash)
                var headers = HTTPHeaders(signed)
                headers.add(name: "Authorization", value: signer.authorization(request, amzDate: amzDate))
                let response = try await connection.send(method, target: target, headers: headers, body: body)
                if attempt >= retries.attempts || !S3Retries.isTransient(response, errorsIn200: errorsIn200) { return response }
            } catch let error as KizunaError where error.code == .storeUnavailable && attempt < retries.attempts {
                // The connection's own failures (refused, reset, timed out) are all store_unavailable: tried again.
            }
            // Throws when the caller is cancelled, which ends the retries.
            try await Task.sleep(for: retries.backoff.delay(attempt: attempt, random: Double.random(in: 0..<1)))
            attempt += 1
        }
    }
}
