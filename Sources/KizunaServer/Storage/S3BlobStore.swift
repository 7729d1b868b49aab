import Foundation
import KizunaCore
import NIOCore
import NIOHTTP1

/// Blobs as objects in an S3-compatible bucket (path-style, SigV4). A blob larger than one part goes up as a
/// multipart upload, completed only once every part is in, and aborted when the body fails: S3 shows nothing under
/// the key until then. Reads are ranged GETs of one part's size each, so a download holds at most one part. A request
/// that fails in a way a retry can fix is sent again (``S3Retries``).
package struct S3BlobStore: BlobStore {
    let connection: ObjectStoreConnection
    let signer: SigV4Signer
    let bucket: String
    /// The bytes of each uploaded part but the last (S3's minimum is 5 MiB) and of each ranged read.
    let partSize: Int
    let retries: S3Retries

    package var chunkSize: Int64 { Int64(partSize) * 2 }

    /// - Parameters:
    ///   - timeout: How long one request may take, from connecting to the answer's end.
    ///   - retries: How often, and after what waits, a request that failed in a way a retry can fix is sent again.
    /// - Throws: `validation_failed` for an endpoint that is not `http(s)://host[:port]`.
    package init(settings: S3Settings, partSize: Int = 8 * 1024 * 1024, timeout: Duration = .seconds(60), retries: S3Retries = S3Retries()) throws {
        connection = try ObjectStoreConnection(endpoint: settings.endpoint, timeout: timeout)
        signer = SigV4Signer(accessKey: settings.accessKey, secretKey: settings.secretKey, region: settings.region)
        bucket = settings.bucket
        self.partSize = partSize
        self.retries = retries
    }

    package func put<Body: AsyncSequence & Sendable>(_ key: String, from body: Body) async throws -> BlobInfo where Body.Element == ByteBuffer {
        var hasher = BlobHasher()
        var pending = ByteBuffer()
        var upload: String?
        var etags: [String] = []
        do {
            for try await var chunk in body {
                hasher.update(chunk)
                pending.writeBuffer(&chunk)
                while pending.readableBytes >= partSize, let part = pending.readSlice(length: partSize) {
                    let id: String
                    if let upload { id = upload } else { id = try await createMultipartUpload(key) }
                    upload = id
                    etags.append(try await uploadPart(key, upload: id, number: etags.count + 1, part))
                    pending.discardReadBytes()
                }
            }
            if let upload {
                if pending.readableBytes > 0 { etags.append(try await uploadPart(key, upload: upload, number: etags.count + 1, pending)) }
                try await completeMultipartUpload(key, upload: upload, etags: etags)
            } else {
                try await expect(send(.PUT, key, body: pending), [.ok], "PutObject")
            }
        } catch {
            if let upload { try? await abortPartial(key, PartialBlob(token: upload)) }
            throw error
        }
        return hasher.finalize()
    }

    package func size(_ key: String) async throws -> Int64 {
        let response = try await send(.HEAD, key)
        if response.status == .notFound { throw KizunaError(.notFound, "No such blob.") }
        try expect(response, [.ok], "HeadObject")
        guard let length = response.headers.first(name: "Content-Length").flatMap({ Int64($0) }) else {
            throw KizunaError(.storeUnavailable, "The object store answered HeadObject without a length.")
        }
        return length
    }

    package func read(_ key: String, range: Range<Int64>?) async throws -> BlobBytes {
        let wanted: Range<Int64>
        if let range { wanted = range } else { wanted = 0..<(try await size(key)) }
        let store = self
        return BlobBytes {
            var position = wanted.lowerBound
            return {
                guard position < wanted.upperBound else { return nil }
                let end = min(position + Int64(store.partSize), wanted.upperBound)
                let response = try await store.send(.GET, key, headers: [("Range", "bytes=\(position)-\(end - 1)")])
                if response.status == .notFound { throw KizunaError(.notFound, "No such blob.") }
                try store.expect(response, [.partialContent, .ok], "GetObject")
                guard response.body.readableBytes == Int(end - position) else {
                    throw KizunaError(.internalError, "A blob ended before its length.")
                }
                position = end
                return response.body
            }
        }
    }

    package func delete(_ key: String) async throws {
        try expect(try await send(.DELETE, key), [.noContent, .ok, .notFound], "DeleteObject")
    }

    /// Creates the bucket (in `us-east-1`, or the signer's region); one this account already owns is no error.
    package func createBucket() async throws {
        let configuration =
            signer.region == "us-east-1"
            ? ByteBuffer()
            : ByteBuffer(
                string:
                    "<CreateBucketConfiguration><LocationConstraint>\(signer.region)</LocationConstraint></CreateBucketConfiguration>")
        let response = try await send(.PUT, nil, body: configuration)
        if response.status == .conflict, Self.element("Code", in: response.body) == "BucketAlreadyOwnedByYou" { return }
        try expect(response, [.ok], "CreateBucket")
    }

    // MARK: Multipart upload

    /// Retried like every request, though it alone is not idempotent: when S3 applied an attempt whose answer was lost,
    /// the next one makes a second upload id and the first is left with no parts — no bytes, and nothing uses it (a
    /// bucket rule for incomplete uploads clears it).
    func createMultipartUpload(_ key: String) async throws -> String {
        let response = try await send(.POST, key, query: [("uploads", "")])
        try expect(response, [.ok], "CreateMultipartUpload")
        guard let id = Self.element("UploadId", in: response.body) else {
            throw KizunaError(.storeUnavailable, "The object store answered CreateMultipartUpload without an upload id.")
        }
        return id
    }

    func uploadPart(_ key: String, upload: String, number: Int, _ part: ByteBuffer) async throws -> String {
        let response = try await send(.PUT, key, query: [("partNumber", String(number)), ("uploadId", upload)], body: part)
        try expect(response, [.ok], "UploadPart")
        guard let etag = response.headers.first(name: "ETag") else {
            throw KizunaError(.storeUnavailable, "The object store answered UploadPart without an ETag.")
        }
        return etag
    }

    func completeMultipartUpload(_ key: String, upload: String, etags: [String]) async throws {
        let parts = etags.enumerated().map { index, etag in
            "<Part><PartNumber>\(index + 1)</PartNumber><ETag>\(etag.xmlEscaped)</ETag></Part>"
        }
        let xml = "<CompleteMultipartUpload>\(parts.joined())</CompleteMultipartUpload>"
        let response = try await send(.POST, key, query: [("uploadId", upload)], body: ByteBuffer(string: xml), errorsIn200: true)
        // S3 may answer 200 and put the failure in the body.
        if response.status == .ok, let code = Self.element("Code", in: response.body) {
            throw KizunaError(.storeUnavailable, "The object store refused CompleteMultipartUpload (\(code)).")
        }
        try expect(response, [.ok], "CompleteMultipartUpload")
    }

    // MARK: Requests

    /// Throws unless `response` has one of `statuses`: the S3 error code (never a key or a secret) in the message.
    func expect(_ response: ObjectStoreConnection.Response, _ statuses: [HTTPResponseStatus], _ operation: String) throws {
        guard !statuses.contains(response.status) else { return }
        let code = Self.element("Code", in: response.body).map { " (\($0))" } ?? ""
        let kind: KizunaError.Code = response.status.code >= 500 || response.status == .forbidden ? .storeUnavailable : .internalError
        throw KizunaError(kind, "The object store answered \(operation) with \(response.status.code)\(code).")
    }

    /// The text of the first `<name>` element in an S3 XML answer (their values are plain: ids, codes, ETags).
    static func element(_ name: String, in body: ByteBuffer) -> String? {
        let text = String(buffer: body)
        guard let start = text.range(of: "<\(name)>"), let end = text.range(of: "</\(name)>", range: start.upperBound..<text.endIndex) else {
            return nil
        }
        return String(text[start.upperBound..<end.lowerBound])
    }
}
