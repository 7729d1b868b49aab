import Foundation
import KizunaCore
import Synchronization
import Testing

@testable import KizunaServer

@Suite("AssociatedDomainRepository contract")
struct AssociatedDomainRepositoryContractTests {
    static let settings = AssociatedDomainSettings(webCredentials: false, appLinks: [AppLinks.Component(path: "/items/*")])

    static func app(_ id: String, platform: Platform = .ios) -> NewApp {
        NewApp(id: id, name: id, platform: platform, bundleId: "com.example.\(id)", teamId: platform.isApple ? "ABCDE12345" : nil)
    }

    /// The inputs a check was shown, in order.
    final class Seen: Sendable {
        let inputs = Mutex<[AssociatedDomainInputs]>([])
    }

    @Test(arguments: TestBackend.available)
    func putStoresSettingsAfterTheCheckAcceptsTheInputs(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            let apps = AppSQLRepository(database: database)
            let domains = AssociatedDomainSQLRepository(database: database)
            let shop = try await apps.create(Self.app("shop"))
            let droid = try await apps.create(Self.app("droid", platform: .android))
            #expect(try await domains.settings(app: "shop") == nil)
            #expect(try await domains.allSettings().isEmpty)

            let seen = Seen()
            try await domains.put(app: "shop", Self.settings) { inputs in seen.inputs.withLock { $0.append(inputs) } }
            #expect(try await domains.settings(app: "shop") == Self.settings)
            #expect(try await domains.allSettings() == ["shop": Self.settings])

            // The check sees every app through the registry, in id order, and the settings as they stand before the change.
            let changed = AssociatedDomainSettings(appLinks: [AppLinks.Component(path: "/other/*")])
            try await domains.put(app: "shop", changed) { inputs in seen.inputs.withLock { $0.append(inputs) } }
            let shown = seen.inputs.withLock { $0 }
            #expect(shown.map(\.apps) == [[droid, shop], [droid, shop]])
            #expect(shown.map(\.settings) == [[:], ["shop": Self.settings]])
            #expect(try await domains.settings(app: "shop") == changed)
        }
    }

    @Test(arguments: TestBackend.available)
    func aRefusedPutLeavesThePreviousSettings(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            _ = try await AppSQLRepository(database: database).create(Self.app("shop"))
            let domains = AssociatedDomainSQLRepository(database: database)
            try await domains.put(app: "shop", Self.settings) { _ in }
            let refused = await #expect(throws: KizunaError.self) {
                try await domains.put(app: "shop", AssociatedDomainSettings()) { _ in
                    throw KizunaError(.validationFailed, "No.")
                }
            }
            #expect(refused?.code == .validationFailed)
            #expect(try await domains.settings(app: "shop") == Self.settings)
        }
    }

    /// Changes to the file take turns (PostgreSQL: an advisory lock), so two changes checked at once never each pass
    /// against a file without the other: with a rule allowing settings for one app only, exactly one of two racing
    /// puts is stored.
    @Test(arguments: TestBackend.available)
    func racingPutsAreCheckedOneAfterTheOther(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            let apps = AppSQLRepository(database: database)
            let domains = AssociatedDomainSQLRepository(database: database)
            for round in 0..<5 {
                let first = try await apps.create(Self.app("first\(round)")).id
                let second = try await apps.create(Self.app("second\(round)")).id
                let pair: Set = [first, second]
                let onlyOne: AssociatedDomainCheck = { inputs in
                    if !pair.isDisjoint(with: inputs.settings.keys) { throw KizunaError(.validationFailed, "One app of the pair at most.") }
                }
                async let a = Self.succeeds { try await domains.put(app: first, Self.settings, checking: onlyOne) }
                async let b = Self.succeeds { try await domains.put(app: second, Self.settings, checking: onlyOne) }
                let stored = try await [a, b]
                #expect(stored.filter { $0 }.count == 1)
                #expect(try await domains.allSettings().count == round + 1)
            }
        }
    }

    /// An app change runs the check inside its own transaction, seeing the change, and is refused when it throws.
    @Test(arguments: TestBackend.available)
    func appChangesAreCheckedInsideTheirTransaction(_ backend: TestBackend) async throws {
        try await withMigratedStore(backend) { database, _ in
            let domains = AssociatedDomainSQLRepository(database: database)
            let seen = Seen()
            let apps = AppSQLRepository(
                database: database, didCommit: {},
                checkChange: { db in
                    try await domains.checkAppChange(on: db) { inputs in
                        seen.inputs.withLock { $0.append(inputs) }
                        if inputs.apps.contains(where: { $0.id == "refused" }) { throw KizunaError(.validationFailed, "No.") }
                    }
                })
            let shop = try await apps.create(Self.app("shop"))
            try await domains.put(app: "shop", Self.settings) { _ in }
            #expect(seen.inputs.withLock { $0 } == [AssociatedDomainInputs(apps: [shop], settings: [:])])

            await #expect(throws: KizunaError.self) { try await apps.create(Self.app("refused")) }
            #expect(try await apps.list().map(\.id) == ["shop"])
            #expect(seen.inputs.withLock { $0.last?.settings } == ["shop": Self.settings])
        }
    }

    /// Whether `body` returned rather than threw a `KizunaError`.
    static func succeeds(_ body: () async throws -> Void) async throws -> Bool {
        do {
            try await body()
            return true
        } catch is KizunaError {
            return false
        }
    }
}
