import Foundation
import KizunaCore
import SQLKit
import Testing

@testable import KizunaServer

@Suite("AppRepository contract")
struct AppRepositoryContractTests {
    static let sample = NewApp(
        id: "my-app", name: "My App", platform: .ios, bundleId: "com.example.app", teamId: "ABCDE12345",
        storeURL: "https://apps.apple.com/app/id1")

    @Test(arguments: TestBackend.available)
    func createFindListUpdateDelete(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            let apps = AppSQLRepository(database: database)
            let created = try await apps.create(Self.sample)
            #expect(created.id == "my-app" && created.teamId == "ABCDE12345")
            #expect(try await apps.find(id: "my-app") == created)
            #expect(try await apps.find(id: "other") == nil)

            _ = try await apps.create(NewApp(id: "android-app", name: "Droid", platform: .android, bundleId: "com.example.app"))
            #expect(try await apps.list().map(\.id) == ["android-app", "my-app"])

            let updated = try await apps.update(id: "my-app", applying: AppPatch(name: "Renamed", storeURL: .clear))
            #expect(updated.name == "Renamed" && updated.storeURL == nil && updated.createdAt == created.createdAt)
            #expect(try await apps.find(id: "my-app")?.name == "Renamed")

            try await apps.delete(id: "my-app")
            #expect(try await apps.find(id: "my-app") == nil)
            await #expect(throws: KizunaError.self) { try await apps.delete(id: "my-app") }
        }
    }

    @Test(arguments: TestBackend.available)
    func conflictsOnIdAndOnBundleIdIgnoringCase(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            let apps = AppSQLRepository(database: database)
            _ = try await apps.create(Self.sample)

            let sameId = await #expect(throws: KizunaError.self) { try await apps.create(Self.sample) }
            #expect(sameId?.code == .conflict && sameId?.field == "id")

            var otherCase = Self.sample
            otherCase.id = "shouty"
            otherCase.bundleId = "COM.Example.APP"
            let sameBundle = await #expect(throws: KizunaError.self) { try await apps.create(otherCase) }
            #expect(sameBundle?.code == .conflict && sameBundle?.field == "bundleId")

            // The same bundle id on another platform is a different app (universal purchase).
            otherCase.platform = .macos
            _ = try await apps.create(otherCase)
            #expect(try await apps.list().count == 2)
        }
    }

    @Test(arguments: TestBackend.available)
    func updateOfMissingAppIsNotFound(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            let error = await #expect(throws: KizunaError.self) {
                try await AppSQLRepository(database: database).update(id: "my-app", applying: AppPatch(name: "New"))
            }
            #expect(error?.code == .notFound)
        }
    }

    @Test(arguments: TestBackend.available)
    func invalidAppsAreRefusedAndNothingIsStored(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            let apps = AppSQLRepository(database: database)
            var bad = Self.sample
            bad.teamId = "lowercase1"
            let refused = await #expect(throws: KizunaError.self) { try await apps.create(bad) }
            #expect(refused?.code == .validationFailed && refused?.field == "teamId")
            #expect(try await apps.list().isEmpty)

            _ = try await apps.create(Self.sample)
            let badPatch = await #expect(throws: KizunaError.self) { try await apps.update(id: "my-app", applying: AppPatch(bundleId: "nodots")) }
            #expect(badPatch?.code == .validationFailed)
            #expect(try await apps.find(id: "my-app")?.bundleId == Self.sample.bundleId)
        }
    }

    /// Each patch reads, merges and writes in one transaction, so patches of different fields never undo each other.
    @Test(arguments: TestBackend.available)
    func concurrentPatchesOfDifferentFieldsAllTakeEffect(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            let apps = AppSQLRepository(database: database)
            _ = try await apps.create(Self.sample)
            for round in 0..<10 {
                async let name = apps.update(id: "my-app", applying: AppPatch(name: "Name \(round)"))
                async let url = apps.update(id: "my-app", applying: AppPatch(storeURL: .set("https://apps.apple.com/app/id\(round)")))
                _ = try await (name, url)
                let stored = try #require(try await apps.find(id: "my-app"))
                #expect(stored.name == "Name \(round)" && stored.storeURL == "https://apps.apple.com/app/id\(round)")
            }
        }
    }
}

@Suite("AdminTokenRepository contract")
struct AdminTokenRepositoryContractTests {
    @Test(arguments: TestBackend.available)
    func createAuthenticateRevoke(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            let tokens = AdminTokenSQLRepository(database: database)
            #expect(try await tokens.count() == 0)
            let (token, credential) = try await tokens.create(name: "  ci  ")
            #expect(token.name == "ci" && token.isActive)
            #expect(credential.token.hasPrefix("kza_\(token.id)_"))
            #expect(try await tokens.count() == 1)

            let authenticated = try await tokens.authenticate(credential)
            #expect(authenticated?.id == token.id && authenticated?.lastUsedAt != nil)

            // Right id, wrong secret; and an id that does not exist.
            let forged = try #require(AdminCredential("kza_\(token.id)_" + String(repeating: "A", count: 43)))
            #expect(try await tokens.authenticate(forged) == nil)
            let unknown = try #require(AdminCredential("kza_000000000000_" + String(repeating: "A", count: 43)))
            #expect(try await tokens.authenticate(unknown) == nil)

            let revoked = try await tokens.revoke(id: token.id)
            #expect(revoked.revokedAt != nil && !revoked.isActive)
            #expect(try await tokens.authenticate(credential) == nil)
            #expect(try await tokens.list().map(\.id) == [token.id])
            await #expect(throws: KizunaError.self) { try await tokens.revoke(id: "nope") }
        }
    }

    @Test(arguments: TestBackend.available)
    func onlyTheHashIsStored(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            let (_, credential) = try await AdminTokenSQLRepository(database: database).create(name: "ci")
            let stored = try await database.raw("SELECT secret_hash FROM admin_tokens").first()?.decode(column: "secret_hash", as: String.self)
            #expect(stored == credential.secretHash)
            #expect(stored?.contains(credential.secret) == false)
        }
    }

    @Test func malformedCredentialsAreRejectedBeforeLookup() {
        #expect(AdminCredential("Bearer nonsense") == nil)
        #expect(AdminCredential("kza_short_secret") == nil)
        #expect(AdminCredential("kza_0123456789ab") == nil)
    }
}
