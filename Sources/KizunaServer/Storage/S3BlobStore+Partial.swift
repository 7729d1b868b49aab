import KizunaCore
import NIOCore
import NIOHTTP1

extension S3BlobStore {
    /// A partial blob is a multipart upload, whose parts S3 keeps until it is completed or aborted: whole parts of
    /// ``partSize`` are uploaded as they fill, and the last, shorter one once the bytes reach the total.
    package func beginPartial(_ key: String) async throws -> PartialBlob {
        PartialBlob(token: try await createMultipartUpload(key))
    }

    /// Keeps whole parts only: bytes of a request cut short past the last whole part are dropped (the client sends
    /// them again from ``PartialBlob/received``). A part already there under the same number is replaced.
    package func append<Body: AsyncSequence & Sendable>(
        _ key: String, to partial: PartialBlob, total: Int64, from body: Body, hashing: inout BlobHasher?
    ) async throws -> (PartialBlob, failure: (any Error)?) where Body.Element == ByteBuffer {
        guard partial.received == Int64(partial.parts.count) * Int64(partSize) else {
            throw KizunaError(.internalError, "A partial blob in the object store ends inside a part.")
        }
        var kept = partial
        var pending = ByteBuffer()
        let failure = try await consume(body) { chunk in
            var chunk = chunk
            pending.writeBuffer(&chunk)
            while pending.readableBytes >= partSize, let part = pending.readSlice(length: partSize) {
                try await keep(part, key, in: &kept, hashing: &hashing)
                pending.discardReadBytes()
            }
        }
        if failure == nil, pending.readableBytes > 0, kept.received + Int64(pending.readableBytes) == total {
            try await keep(pending, key, in: &kept, hashing: &hashing)
        }
        return (kept, failure)
    }

    package func finishPartial(_ key: String, _ partial: PartialBlob) async throws {
        if partial.parts.isEmpty {
            // S3 completes no upload without parts: an empty blob is put whole.
            try expect(try await send(.PUT, key, body: ByteBuffer()), [.ok], "PutObject")
            try await abortPartial(key, partial)
        } else {
            do {
                try await completeMultipartUpload(key, upload: partial.token, etags: partial.parts)
            } catch {
                // Completed already (a finish run again, or a retry after a lost answer: MinIO and Ceph then say
                // NoSuchUpload): the object is there with every byte.
                guard let stored = try? await size(key), stored == partial.received else { throw error }
            }
        }
    }

    package func abortPartial(_ key: String, _ partial: PartialBlob) async throws {
        try expect(try await send(.DELETE, key, query: [("uploadId", partial.token)]), [.noContent, .ok, .notFound], "AbortMultipartUpload")
    }

    /// Uploads one part and counts it kept.
    private func keep(_ part: ByteBuffer, _ key: String, in partial: inout PartialBlob, hashing: inout BlobHasher?) async throws {
        let etag = try await uploadPart(key, upload: partial.token, number: partial.parts.count + 1, part)
        hashing?.update(part)
        partial.parts.append(etag)
        partial.received += Int64(part.readableBytes)
    }
}
