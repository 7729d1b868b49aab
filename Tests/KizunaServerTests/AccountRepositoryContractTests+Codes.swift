import Foundation
import KizunaCore
import SQLKit
import Testing

@testable import KizunaServer

@Suite("AccountRepository contract: refresh and one-time codes")
struct AccountRepositoryCodesContractTests {
    /// An exchange of `presented` for a fresh pair at `now`.
    static func rotation(presenting presented: SessionSecret, now: Int64) -> RefreshRotation {
        RefreshRotation(
            presented: presented, access: .generate(.access), refresh: .generate(.refresh), expiresAt: now + 3_600_000,
            refreshExpiresAt: now + 86_400_000, now: now, forgetRetiredBefore: now - 86_400_000)
    }

    /// Answers a reused token with whatever its last exchange sealed, as a client within the grace period would get.
    static func openSealed(_ presented: SessionSecret) -> @Sendable (ReusedRefresh) -> IssuedSession? {
        return { reused in reused.sealedAnswer.flatMap { RefreshGrace.open($0, with: presented, session: reused.sessionId) } }
    }

    static func name(_ outcome: RefreshOutcome) -> String {
        switch outcome {
        case .rotated: "rotated"
        case .expired: "expired"
        case .disabled: "disabled"
        case .retried: "retried"
        case .signedOut: "signedOut"
        case .unknown: "unknown"
        }
    }

    @Test(arguments: TestBackend.available)
    func refreshRotatesThenAnswersARetryOnceThenSignsOut(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            let accounts = AccountSQLRepository(database: database)
            let now = EpochMillis.now
            let (account, session, _, _) = try await AccountFixtures.create(accounts, now: now)
            let original = try #require(session.issued.refresh)

            let rotation = Self.rotation(presenting: original, now: now + 1)
            let rotated = try await accounts.exchangeRefresh(rotation, answerRetry: Self.openSealed(original))
            guard case .rotated(let owner, let issued) = rotated else { throw Unexpected(rotated) }
            #expect(owner == account && issued.id == session.issued.id && issued.refresh == rotation.refresh)
            #expect(try await accounts.session(accessHash: rotation.access.hash)?.expiresAt == rotation.expiresAt)
            #expect(try await accounts.session(accessHash: session.issued.access.hash) == nil)

            // The old token again: the same pair, once.
            let retried = try await accounts.exchangeRefresh(
                Self.rotation(presenting: original, now: now + 2), answerRetry: Self.openSealed(original))
            guard case .retried(let again, let answer) = retried else { throw Unexpected(retried) }
            #expect(again == account && answer.access == rotation.access && answer.refresh == rotation.refresh)
            #expect(answer.expiresAt == rotation.expiresAt && answer.refreshExpiresAt == rotation.refreshExpiresAt)

            let third = try await accounts.exchangeRefresh(Self.rotation(presenting: original, now: now + 3), answerRetry: Self.openSealed(original))
            guard case .signedOut(let reused) = third else { throw Unexpected(third) }
            #expect(reused.sessionId == session.issued.id && reused.isLast && reused.sealedAnswer == nil)
            #expect(reused.rotatedAt == now + 1 && reused.installId == "install-1" && !reused.disabled)
            #expect(try await accounts.session(accessHash: rotation.access.hash) == nil)

            // The session is gone, and with it every token it knew.
            let afterSignOut = try await accounts.exchangeRefresh(
                Self.rotation(presenting: rotation.refresh, now: now + 4), answerRetry: { _ in nil })
            #expect(Self.name(afterSignOut) == "unknown")
            let never = try await accounts.exchangeRefresh(Self.rotation(presenting: .generate(.refresh), now: now), answerRetry: { _ in nil })
            #expect(Self.name(never) == "unknown")
        }
    }

    @Test(arguments: TestBackend.available)
    func expiredAndDisabledSessionsAreNotRotated(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            let accounts = AccountSQLRepository(database: database)
            let now = EpochMillis.now
            let (account, session, _, _) = try await AccountFixtures.create(accounts, now: now)
            let short = AccountFixtures.session(.app, policy: SessionPolicy(refreshLifetime: .seconds(1)), now: now - 10_000)
            try await accounts.recordSignIn(userId: account.id, rehashed: nil, session: short, trust: nil)

            let expired = try await accounts.exchangeRefresh(
                Self.rotation(presenting: try #require(short.issued.refresh), now: now), answerRetry: { _ in nil })
            #expect(Self.name(expired) == "expired")
            #expect(try await accounts.session(accessHash: short.issued.access.hash) != nil)

            try await database.update("users").set("disabled_at", to: SQLBind(now)).where("id", .equal, SQLBind(account.id)).run()
            let disabled = try await accounts.exchangeRefresh(
                Self.rotation(presenting: try #require(session.issued.refresh), now: now), answerRetry: { _ in nil })
            #expect(Self.name(disabled) == "disabled")
            #expect(try await accounts.session(accessHash: session.issued.access.hash) != nil)
        }
    }

    /// Two exchanges of one token at once: one rotates, the other waits for it (PostgreSQL: `FOR UPDATE OF s`) and is
    /// answered as a retry with the same pair, instead of signing the session out.
    @Test(arguments: TestBackend.available)
    func concurrentExchangesOfOneTokenRotateOnce(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            let accounts = AccountSQLRepository(database: database)
            let now = EpochMillis.now
            for round in 0..<5 {
                let (_, session, _, _) = try await AccountFixtures.create(accounts, "user\(round)@example.com", now: now)
                let token = try #require(session.issued.refresh)
                async let first = accounts.exchangeRefresh(Self.rotation(presenting: token, now: now + 1), answerRetry: Self.openSealed(token))
                async let second = accounts.exchangeRefresh(Self.rotation(presenting: token, now: now + 1), answerRetry: Self.openSealed(token))
                let outcomes = try await [first, second]
                #expect(outcomes.map(Self.name).sorted() == ["retried", "rotated"])
            }
        }
    }

    @Test(arguments: TestBackend.available)
    func resetCodesAreReplacedAndConsumedOnce(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            let accounts = AccountSQLRepository(database: database)
            let now = EpochMillis.now
            let (account, session, _, _) = try await AccountFixtures.create(accounts, now: now)
            let earlier = SessionSecret.generate(.passwordReset)
            let code = SessionSecret.generate(.passwordReset)
            try await accounts.replaceResetCode(hash: earlier.hash, userId: account.id, createdAt: now, expiresAt: now + 1000)
            #expect(try await accounts.resetCode(hash: earlier.hash) == StoredResetCode(userId: account.id, expiresAt: now + 1000))
            try await accounts.replaceResetCode(hash: code.hash, userId: account.id, createdAt: now, expiresAt: now + 2000)
            #expect(try await accounts.resetCode(hash: earlier.hash) == nil)
            #expect(try await accounts.resetCode(hash: code.hash)?.expiresAt == now + 2000)

            // Consuming the code sets the password and signs every session out; a second use changes nothing.
            #expect(try await accounts.setPassword(userId: account.id, hash: "hash-2", at: now, keepingSession: nil, consumingCode: code.hash))
            #expect(try await accounts.passwordHash(userId: account.id) == "hash-2")
            #expect(try await accounts.session(accessHash: session.issued.access.hash) == nil)
            #expect(
                try await accounts.setPassword(userId: account.id, hash: "hash-3", at: now, keepingSession: nil, consumingCode: code.hash) == false)
            #expect(try await accounts.passwordHash(userId: account.id) == "hash-2")

            // Redeemed twice at once, a code sets the password once.
            let raced = SessionSecret.generate(.passwordReset)
            try await accounts.replaceResetCode(hash: raced.hash, userId: account.id, createdAt: now, expiresAt: now + 2000)
            async let first = accounts.setPassword(userId: account.id, hash: "hash-a", at: now, keepingSession: nil, consumingCode: raced.hash)
            async let second = accounts.setPassword(userId: account.id, hash: "hash-b", at: now, keepingSession: nil, consumingCode: raced.hash)
            let consumed = try await [first, second]
            #expect(consumed.filter { $0 }.count == 1)

            // Without a code: the given session stays, the others go.
            let kept = AccountFixtures.session(now: now)
            let other = AccountFixtures.session(now: now)
            try await accounts.recordSignIn(userId: account.id, rehashed: nil, session: kept, trust: nil)
            try await accounts.recordSignIn(userId: account.id, rehashed: nil, session: other, trust: nil)
            #expect(try await accounts.setPassword(userId: account.id, hash: "hash-4", at: now, keepingSession: kept.issued.id, consumingCode: nil))
            #expect(try await accounts.sessions(of: account.id, activeAt: now).map(\.id) == [kept.issued.id])
        }
    }

    @Test(arguments: TestBackend.available)
    func handoffCodesOpenOneSessionWhileTheirAppSessionLives(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            let accounts = AccountSQLRepository(database: database)
            let now = EpochMillis.now
            let (account, session, _, _) = try await AccountFixtures.create(accounts, now: now)
            let code = SessionSecret.generate(.handoff)
            try await accounts.createHandoff(
                hash: code.hash, userId: account.id, sessionId: session.issued.id, next: "/account/change-password", createdAt: now,
                expiresAt: now + 60_000)

            let web = AccountFixtures.session(now: now + 1)
            #expect(
                try await accounts.redeemHandoff(hash: code.hash, at: now + 1, session: web) == HandoffRedemption(next: "/account/change-password"))
            let opened = try #require(try await accounts.session(accessHash: web.issued.access.hash))
            #expect(opened.account == account && opened.kind == .web)

            let again = AccountFixtures.session(now: now + 2)
            #expect(try await accounts.redeemHandoff(hash: code.hash, at: now + 2, session: again) == nil)
            #expect(try await accounts.session(accessHash: again.issued.access.hash) == nil)

            // Expired: refused, and gone even for a clock that would still accept it.
            let late = SessionSecret.generate(.handoff)
            try await accounts.createHandoff(
                hash: late.hash, userId: account.id, sessionId: session.issued.id, next: "/", createdAt: now, expiresAt: now + 10)
            #expect(try await accounts.redeemHandoff(hash: late.hash, at: now + 11, session: AccountFixtures.session(now: now + 11)) == nil)
            #expect(try await accounts.redeemHandoff(hash: late.hash, at: now, session: AccountFixtures.session(now: now)) == nil)

            // The app session that asked for it has ended.
            let orphan = SessionSecret.generate(.handoff)
            try await accounts.createHandoff(
                hash: orphan.hash, userId: account.id, sessionId: session.issued.id, next: "/", createdAt: now, expiresAt: now + 60_000)
            #expect(try await accounts.deleteSession(id: session.issued.id, of: account.id))
            let late2 = AccountFixtures.session(now: now + 3)
            #expect(try await accounts.redeemHandoff(hash: orphan.hash, at: now + 3, session: late2) == nil)
            #expect(try await accounts.session(accessHash: late2.issued.access.hash) == nil)
        }
    }
}

/// A refresh outcome a test did not expect.
struct Unexpected: Error, CustomStringConvertible {
    let outcome: RefreshOutcome
    init(_ outcome: RefreshOutcome) { self.outcome = outcome }
    var description: String { "unexpected refresh outcome: \(AccountRepositoryCodesContractTests.name(outcome))" }
}
