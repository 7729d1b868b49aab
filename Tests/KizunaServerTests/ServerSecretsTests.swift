import Crypto
import Foundation
import Testing

@testable import KizunaServer

/// Every instance of one store signs with the same key, made once by whichever asked first.
@Suite("Server secrets")
struct ServerSecretsTests {
    @Test(arguments: TestBackend.available)
    func instancesRacingForAKeyAgreeOnOne(_ backend: TestBackend) async throws {
        try await withTestStore(backend) { store in
            let databases = [try await store.openMigrated(), try store.open(), try store.open()]
            let keys = try await withThrowingTaskGroup(of: Data.self) { group in
                for database in databases {
                    group.addTask { try await ServerSecrets(database: database).key("page-cursor").withUnsafeBytes { Data($0) } }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(keys.count == 3 && Set(keys).count == 1 && keys[0].count == 32)
            let other = try await ServerSecrets(database: databases[0]).key("other").withUnsafeBytes { Data($0) }
            #expect(other != keys[0])
            for database in databases { await database.shutdown() }
        }
    }
}
