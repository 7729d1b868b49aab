import Foundation
import KizunaCore
import Synchronization
import Testing

@testable import KizunaServer

@Suite("SignInThrottleRepository contract")
struct SignInThrottleRepositoryContractTests {
    static let account = SignInThrottle.Key(value: "account:abc", allowance: 3)
    static let address = SignInThrottle.Key(value: "address:192.0.2.1", allowance: 30)

    /// One more failure, locked until `failures × 1000` so that ``SignInThrottleRepository/locks(of:)`` shows the count.
    @Sendable static func increment(_ key: SignInThrottle.Key, _ stored: SignInThrottleCount?) -> SignInThrottleCount {
        let failures = (stored?.failures ?? 0) + 1
        return SignInThrottleCount(failures: failures, lockedUntil: Int64(failures) * 1000, updatedAt: 10)
    }

    /// The counts `recordFailures` showed its function, in order.
    final class Seen: Sendable {
        let counts = Mutex<[String: [SignInThrottleCount?]]>([:])
    }

    @Test(arguments: TestBackend.available)
    func failuresAreCountedFromWhatIsStored(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            let throttles = SignInThrottleSQLRepository(database: database)
            #expect(try await throttles.locks(of: [Self.account.value]).isEmpty)

            let seen = Seen()
            let recording: @Sendable (SignInThrottle.Key, SignInThrottleCount?) -> SignInThrottleCount = { key, stored in
                seen.counts.withLock { $0[key.value, default: []].append(stored) }
                return Self.increment(key, stored)
            }
            try await throttles.recordFailures(of: [Self.account, Self.address], counting: recording)
            try await throttles.recordFailures(of: [Self.account], counting: recording)
            let counts = seen.counts.withLock { $0 }
            #expect(counts[Self.account.value] == [nil, SignInThrottleCount(failures: 1, lockedUntil: 1000, updatedAt: 10)])
            #expect(counts[Self.address.value] == [nil])
            #expect(try await throttles.locks(of: [Self.account.value]) == [2000])
            #expect(try await throttles.locks(of: [Self.account.value, Self.address.value, "unknown"]).sorted() == [1000, 2000])

            // A count without a lock is stored, but shows no lock.
            try await throttles.recordFailures(of: [Self.address]) { _, stored in
                SignInThrottleCount(failures: (stored?.failures ?? 0) + 1, lockedUntil: nil, updatedAt: 20)
            }
            #expect(try await throttles.locks(of: [Self.address.value]).isEmpty)
        }
    }

    @Test(arguments: TestBackend.available)
    func clearAndPruneForgetCounts(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            let throttles = SignInThrottleSQLRepository(database: database)
            try await throttles.recordFailures(of: [Self.account, Self.address], counting: Self.increment)
            try await throttles.clear([Self.account.value])
            #expect(try await throttles.locks(of: [Self.account.value, Self.address.value]) == [1000])

            try await throttles.recordFailures(of: [Self.account]) { _, _ in SignInThrottleCount(failures: 1, lockedUntil: 5000, updatedAt: 100) }
            try await throttles.prune(updatedBefore: 100)  // the address's count changed at 10
            #expect(try await throttles.locks(of: [Self.account.value, Self.address.value]) == [5000])
            try await throttles.prune(updatedBefore: 101)
            #expect(try await throttles.locks(of: [Self.account.value]).isEmpty)
        }
    }

    /// Each row is held while it is recounted, so failures recorded at once on one key are all counted.
    @Test(arguments: TestBackend.available)
    func concurrentFailuresAreAllCounted(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            let throttles = SignInThrottleSQLRepository(database: database)
            try await throttles.recordFailures(of: [Self.account], counting: Self.increment)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<10 {
                    group.addTask { try await throttles.recordFailures(of: [Self.account], counting: Self.increment) }
                }
                try await group.waitForAll()
            }
            #expect(try await throttles.locks(of: [Self.account.value]) == [11_000])
        }
    }
}
