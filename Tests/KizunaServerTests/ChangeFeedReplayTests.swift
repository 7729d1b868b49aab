import Logging
import Testing

@testable import KizunaServer

/// What a resuming subscriber is replayed from the log: exactly the changes in `(after, through]`, filtered, across
/// the feed's read batches.
@Suite("ChangeFeed replay")
struct ChangeFeedReplayTests {
    @Test(arguments: TestBackend.available)
    func replaysExactlyTheRangeAcrossBatches(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            // 1,300 changes in one transaction, alternating two apps and two kinds; more than two read batches.
            let seqs = try await database.transaction { db in
                var seqs: [Int64] = []
                for index in 0..<1300 {
                    let seq = try await ChangeLog.append(
                        kind: index % 4 < 2 ? "config" : "gate", entityId: index.isMultiple(of: 2) ? "a" : "b", version: Int64(index), on: db)
                    seqs.append(seq)
                }
                return seqs
            }
            let feed = ChangeFeed(database: database, logger: Logger(label: "test"))
            #expect(try await feed.oldestKept() == seqs.first)

            let all = try await feed.replay(after: seqs[99], through: seqs[1199])
            #expect(all.map(\.seq) == Array(seqs[100...1199]))

            let appA = try await feed.replay(after: seqs[99], through: seqs[1199], kinds: ["config", "gate"], entityId: "a")
            #expect(appA.map(\.seq) == stride(from: 100, through: 1199, by: 2).map { seqs[$0] })

            let configOfB = try await feed.replay(after: 0, through: seqs.last!, kinds: ["config"], entityId: "b")
            #expect(configOfB.map(\.version) == (0..<1300).filter { $0 % 4 == 1 }.map(Int64.init))

            #expect(try await feed.replay(after: seqs[500], through: seqs[500]).isEmpty)
        }
    }
}
