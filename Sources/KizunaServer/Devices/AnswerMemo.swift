import Crypto
import Foundation
import KizunaCore
import NIOCore
import Synchronization

/// Device answers already encoded for one parsed document: a `config:fetch` answer depends on the device only through
/// which of the template's conditions hold, and a `gate:check` answer only through its decision and whether the
/// install is a maintenance tester, so the millions of installs of an app share a handful of answers. Encoding them
/// (JSON, and a SHA-256 for the ETag) was most of the route's cost.
///
/// ``LiveDocuments`` keeps one memo with each document it has parsed, so a publish — which replaces the parsed
/// document, on every instance through the change feed — starts an empty memo, and no answer outlives the version it
/// was made from. A memo keeps at most `limit` answers; past that, answers are made and not kept.
final class AnswerMemo<Key: Hashable & Sendable>: Sendable {
    /// A body and its ETag.
    struct Answer: Sendable {
        let body: ByteBuffer
        let etag: String
    }

    private let limit: Int
    private let answers = Mutex<[Key: Answer]>([:])

    init(limit: Int = 1024) {
        self.limit = limit
    }

    /// The answer for `key`; `make` encodes it when none is kept. Its ETag is the version and a digest of the bytes.
    func answer(_ key: Key, version: Int64, make: () throws -> [UInt8]) rethrows -> Answer {
        if let kept = answers.withLock({ $0[key] }) { return kept }
        let bytes = try make()
        let answer = Answer(body: ByteBuffer(bytes: bytes), etag: "\"\(version)-\(hex(Data(SHA256.hash(data: bytes).prefix(8))))\"")
        answers.withLock { if $0.count < limit { $0[key] = answer } }
        return answer
    }
}
