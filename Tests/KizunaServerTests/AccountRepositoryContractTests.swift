import Foundation
import KizunaCore
import SQLKit
import Testing

@testable import KizunaServer

/// Accounts as the contract suites store them.
enum AccountFixtures {
    static let phone = DeviceRegistration(appId: "my-app", installId: "install-1", name: "Phone")

    /// A new session of `kind`, created at `now`, from `device`.
    static func session(
        _ kind: SessionInfo.Kind = .web, device: DeviceRegistration? = nil, policy: SessionPolicy = .default, now: Int64 = EpochMillis.now
    ) -> NewSession {
        AccountService.newSession(kind: kind, device: device, policy: policy, now: now)
    }

    /// Stores an account with password hash `hash-1`, an app session from ``phone`` and a device token.
    static func create(
        _ accounts: AccountSQLRepository, _ identifier: String = "mio@example.com", now: Int64 = EpochMillis.now
    ) async throws -> (account: AccountInfo, session: NewSession, trust: SessionSecret, outcome: AccountCreation) {
        let account = AccountInfo(id: newIdentifier("usr_"), identifier: AccountIdentifier(identifier).normalized, createdAt: EpochMillis.date(now))
        let first = Self.session(.app, device: phone, now: now)
        let trust = SessionSecret.generate(.trust)
        let outcome = try await accounts.create(
            NewAccount(account: account, passwordHash: "hash-1", createdAt: now), session: first, trust: trust)
        return (account, first, trust, outcome)
    }
}

@Suite("AccountRepository contract")
struct AccountRepositoryContractTests {
    @Test(arguments: TestBackend.available)
    func createStoresTheAccountWithItsFirstSessionDeviceAndToken(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            let accounts = AccountSQLRepository(database: database)
            let (account, session, trust, outcome) = try await AccountFixtures.create(accounts)
            #expect(outcome == .created)

            // Looked up by the normalised identifier.
            let stored = try #require(try await accounts.credentials(identifier: AccountIdentifier("MIO@example.com")))
            #expect(stored.account == account && stored.passwordHash == "hash-1" && stored.disabledAt == nil)
            #expect(try await accounts.credentials(identifier: AccountIdentifier("ren@example.com")) == nil)
            #expect(try await accounts.account(id: account.id) == account)

            let found = try #require(try await accounts.session(accessHash: session.issued.access.hash))
            #expect(found.id == session.issued.id && found.kind == .app && found.account == account)
            #expect(found.expiresAt == session.issued.expiresAt && found.lastUsedAt == session.createdAt)

            #expect(try await accounts.isTrusted(trust, by: account.id))
            #expect(try await accounts.isTrusted(SessionSecret.generate(.trust), by: account.id) == false)
            #expect(try await accounts.isTrusted(trust, by: "usr_other") == false)

            let record = try #require(try await accounts.user(id: account.id, now: session.createdAt))
            #expect(record.identifier == "mio@example.com" && record.kind == .email && !record.disabled && record.activeSessions == 1)
            #expect(record.devices.map(\.installId) == ["install-1"] && record.devices.first?.name == "Phone")
        }
    }

    /// The check and the unique index together: of two sign-ups racing for one identifier exactly one is stored.
    @Test(arguments: TestBackend.available)
    func aTakenIdentifierIsRefusedAlsoWhenTwoSignUpsRace(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            let accounts = AccountSQLRepository(database: database)
            _ = try await AccountFixtures.create(accounts)
            #expect(try await AccountFixtures.create(accounts, "Mio@Example.COM").outcome == .identifierTaken)

            for round in 0..<5 {
                async let first = AccountFixtures.create(accounts, "race\(round)@example.com")
                async let second = AccountFixtures.create(accounts, "race\(round)@example.com")
                let outcomes = try await [first.outcome, second.outcome]
                #expect(outcomes.filter { $0 == .created }.count == 1 && outcomes.contains(.identifierTaken))
            }
        }
    }

    @Test(arguments: TestBackend.available)
    func recordSignInStoresTheSessionTheRehashAndTheNewDeviceToken(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            let accounts = AccountSQLRepository(database: database)
            let now = EpochMillis.now
            let (account, _, _, _) = try await AccountFixtures.create(accounts, now: now)

            let web = AccountFixtures.session(now: now + 1000)
            try await accounts.recordSignIn(userId: account.id, rehashed: "hash-2", session: web, trust: nil)
            #expect(try await accounts.passwordHash(userId: account.id) == "hash-2")
            #expect(try await accounts.session(accessHash: web.issued.access.hash)?.kind == .web)
            let record = try #require(try await accounts.user(id: account.id, now: now + 1000))
            #expect(record.activeSessions == 2 && record.lastSignInAt == EpochMillis.date(now + 1000))

            let trust = SessionSecret.generate(.trust)
            try await accounts.recordSignIn(userId: account.id, rehashed: nil, session: AccountFixtures.session(now: now + 2000), trust: trust)
            #expect(try await accounts.passwordHash(userId: account.id) == "hash-2")
            #expect(try await accounts.isTrusted(trust, by: account.id))
        }
    }

    @Test(arguments: TestBackend.available)
    func sessionsAreListedTouchedAndSignedOutPerAccount(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            let accounts = AccountSQLRepository(database: database)
            let now = EpochMillis.now
            let (account, first, _, _) = try await AccountFixtures.create(accounts, now: now)
            let (other, otherSession, _, _) = try await AccountFixtures.create(accounts, "ren@example.com", now: now)
            let second = AccountFixtures.session(now: now + 1)
            try await accounts.recordSignIn(userId: account.id, rehashed: nil, session: second, trust: nil)
            let ended = AccountFixtures.session(policy: SessionPolicy(webLifetime: .seconds(1)), now: now - 10_000)
            try await accounts.recordSignIn(userId: account.id, rehashed: nil, session: ended, trust: nil)

            // Newest first, the expired one left out, none marked current.
            let listed = try await accounts.sessions(of: account.id, activeAt: now + 2)
            #expect(listed.map(\.id) == [second.issued.id, first.issued.id] && listed.allSatisfy { !$0.current })
            #expect(listed.last?.installId == "install-1" && listed.last?.kind == .app)

            try await accounts.touchSession(id: second.issued.id, at: now + 5000)
            #expect(try await accounts.session(accessHash: second.issued.access.hash)?.lastUsedAt == now + 5000)

            // Another account's session is not this account's to end.
            #expect(try await accounts.deleteSession(id: otherSession.issued.id, of: account.id) == false)
            #expect(try await accounts.session(accessHash: otherSession.issued.access.hash) != nil)
            #expect(try await accounts.deleteSession(id: first.issued.id, of: account.id))
            #expect(try await accounts.session(accessHash: first.issued.access.hash) == nil)

            try await accounts.deleteSessions(of: account.id, keeping: second.issued.id)
            #expect(try await accounts.sessions(of: account.id, activeAt: 0).map(\.id) == [second.issued.id])
            try await accounts.deleteSessions(of: account.id, keeping: nil)
            #expect(try await accounts.sessions(of: account.id, activeAt: 0).isEmpty)
            #expect(try await accounts.sessions(of: other.id, activeAt: 0).map(\.id) == [otherSession.issued.id])
        }
    }

    @Test(arguments: TestBackend.available)
    func operatorsPageSearchDisableAndDelete(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            let accounts = AccountSQLRepository(database: database)
            let now = EpochMillis.now
            var ids: [String: String] = [:]
            for name in ["ami", "ben", "cho"] {
                ids[name] = try await AccountFixtures.create(accounts, "\(name)@example.com", now: now).account.id
            }

            let first = try await accounts.users(after: nil, limit: 2, containing: nil, now: now)
            #expect(first.users.map(\.identifier) == ["ami@example.com", "ben@example.com"] && first.next == "ben@example.com")
            let second = try await accounts.users(after: first.next, limit: 2, containing: nil, now: now)
            #expect(second.users.map(\.identifier) == ["cho@example.com"] && second.next == nil)
            #expect(try await accounts.users(after: nil, limit: 10, containing: "en@", now: now).users.map(\.identifier) == ["ben@example.com"])

            // LIKE's wildcards in a search are taken literally.
            _ = try await AccountFixtures.create(accounts, "d_n@example.com", now: now)
            #expect(try await accounts.users(after: nil, limit: 10, containing: "_", now: now).users.map(\.identifier) == ["d_n@example.com"])
            #expect(try await accounts.users(after: nil, limit: 10, containing: "%", now: now).users.isEmpty)
            #expect(try await accounts.user(identifier: "ben@example.com", now: now)?.id == ids["ben"])
            #expect(try await accounts.user(identifier: "nobody@example.com", now: now) == nil)

            // Disabling signs every session out in the same step; enabling does not bring them back.
            let ben = try #require(ids["ben"])
            try await accounts.setDisabled(true, userId: ben, at: now + 1)
            let disabled = try #require(try await accounts.user(id: ben, now: now + 1))
            #expect(disabled.disabled && disabled.activeSessions == 0 && disabled.updatedAt == EpochMillis.date(now + 1))
            #expect(try await accounts.credentials(identifier: AccountIdentifier("ben@example.com"))?.disabledAt == now + 1)
            try await accounts.setDisabled(false, userId: ben, at: now + 2)
            #expect(try await accounts.user(id: ben, now: now + 2)?.disabled == false)
            #expect(try await accounts.user(id: ben, now: now + 2)?.activeSessions == 0)

            // Deleting takes everything that hangs off the account with it.
            let cho = try #require(ids["cho"])
            try await accounts.delete(userId: cho)
            #expect(try await accounts.account(id: cho) == nil)
            #expect(try await accounts.credentials(identifier: AccountIdentifier("cho@example.com")) == nil)
            #expect(try await accounts.sessions(of: cho, activeAt: 0).isEmpty)
            #expect(try await accounts.users(after: nil, limit: 10, containing: nil, now: now).users.count == 3)
        }
    }
}
