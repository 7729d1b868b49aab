import Crypto
import Foundation
import KizunaCore
import NIOCore

/// What a stored blob is: its size and the checksums computed while it streamed in.
package struct BlobInfo: Sendable, Hashable {
    package var size: Int64
    package var sha256: String
    package var md5: String
}

/// Large files (release artifacts; chat attachments later), streamed in and out without ever sitting whole in
/// memory: ``FileBlobStore`` (a directory) or ``S3BlobStore`` (an S3-compatible bucket).
///
/// A blob may also be written over several requests (a resumable upload): ``beginPartial(_:)`` starts it,
/// ``append(_:to:total:from:hashing:)`` adds bytes in order and keeps what is durable even when the stream is cut,
/// ``finishPartial(_:_:)`` puts it under its key. Until then nothing is visible under the key.
package protocol BlobStore: Sendable {
    /// The request size a resumable upload should use: a multiple of the store's part size.
    var chunkSize: Int64 { get }
    /// Stores what `body` yields under `key`, computing size and checksums on the way; the blob is visible only once
    /// complete (a crash or a failed stream leaves nothing under `key`).
    func put<Body: AsyncSequence & Sendable>(_ key: String, from body: Body) async throws -> BlobInfo where Body.Element == ByteBuffer
    /// The bytes of `key` in `range` (the whole blob when `nil`), read a chunk at a time as they are asked for.
    func read(_ key: String, range: Range<Int64>?) async throws -> BlobBytes
    /// The size of `key`. - Throws: `not_found`.
    func size(_ key: String) async throws -> Int64
    /// Removes `key`; a missing blob is not an error.
    func delete(_ key: String) async throws

    /// Starts a blob that will go under `key` once finished.
    func beginPartial(_ key: String) async throws -> PartialBlob
    /// Appends what `body` yields to `partial` (which ends at `total` bytes), from its ``PartialBlob/received``:
    /// bytes past that which a crash may have left are overwritten. `hashing`, when given, is updated with exactly
    /// the bytes kept.
    /// - Returns: What is now durably stored — an object store keeps whole parts only, so less than was sent when the
    ///   stream ends short of `total` — and the body's failure, if it failed: bytes kept before it are not lost.
    /// - Throws: When the store itself fails; `partial` is then as it was before.
    func append<Body: AsyncSequence & Sendable>(
        _ key: String, to partial: PartialBlob, total: Int64, from body: Body, hashing: inout BlobHasher?
    ) async throws -> (PartialBlob, failure: (any Error)?) where Body.Element == ByteBuffer
    /// Puts a partial blob holding all its bytes under `key`; one already put there (a finish run again) is no error.
    func finishPartial(_ key: String, _ partial: PartialBlob) async throws
    /// Discards a partial blob; one already gone is not an error.
    func abortPartial(_ key: String, _ partial: PartialBlob) async throws
}

/// Reads `body` a buffer at a time into `each`, telling the two failures apart: `each` throwing (the store failing)
/// propagates; the body failing (the client went away) ends the reading and is returned, for the caller to keep what
/// arrived before it.
func consume<Body: AsyncSequence>(
    _ body: Body, _ each: (ByteBuffer) async throws -> Void
) async throws -> (any Error)? where Body.Element == ByteBuffer {
    var buffers = body.makeAsyncIterator()
    while true {
        let next: ByteBuffer?
        do {
            next = try await buffers.next()
        } catch {
            return error
        }
        guard let next else { return nil }
        try await each(next)
    }
}

/// Thrown by ``BlobStore/append(_:to:total:from:hashing:)`` when the store holds fewer bytes of a partial blob than
/// were recorded (another writer cut it back): what it holds cannot be trusted.
package struct PartialBlobLost: Error {}

/// A blob being written over several requests: what the store needs to go on with it, kept in the database
/// between requests (and restarts).
package struct PartialBlob: Sendable, Hashable, Codable {
    /// The store's handle: a file name in the blob directory, or an S3 multipart upload id.
    package var token: String
    /// The bytes durably stored.
    package var received: Int64
    /// The ETags of the parts uploaded, in order (S3 only).
    package var parts: [String]

    package init(token: String, received: Int64 = 0, parts: [String] = []) {
        self.token = token
        self.received = received
        self.parts = parts
    }
}

/// The size, SHA-256 and MD5 of bytes as they go by.
package struct BlobHasher: Sendable {
    private var sha256 = SHA256()
    private var md5 = Insecure.MD5()
    package private(set) var count: Int64 = 0

    package init() {}

    package mutating func update(_ bytes: UnsafeRawBufferPointer) {
        sha256.update(bufferPointer: bytes)
        md5.update(bufferPointer: bytes)
        count += Int64(bytes.count)
    }

    package mutating func update(_ buffer: ByteBuffer) {
        buffer.withUnsafeReadableBytes { update($0) }
    }

    package func finalize() -> BlobInfo {
        BlobInfo(size: count, sha256: hex(sha256.finalize()), md5: hex(md5.finalize()))
    }
}

/// A blob's bytes, read a chunk at a time only as the consumer asks (a slow client never makes the server buffer
/// the file).
package struct BlobBytes: AsyncSequence, Sendable {
    package typealias Element = ByteBuffer
    /// Makes each iteration's reader.
    let open: @Sendable () -> (() async throws -> ByteBuffer?)

    package func makeAsyncIterator() -> Iterator { Iterator(next: open()) }

    package struct Iterator: AsyncIteratorProtocol {
        let nextChunk: () async throws -> ByteBuffer?
        init(next: @escaping () async throws -> ByteBuffer?) { nextChunk = next }
        package mutating func next() async throws -> ByteBuffer? { try await nextChunk() }
    }
}
