import Foundation
import Subprocess
import Testing

/// `kizuna migrate --status --fail-if-pending` as a deploy script runs it: the real binary, its exit status.
@Suite("kizuna migrate --status --fail-if-pending")
struct MigrateStatusTests {
    @Test func exitsFourWhileStepsRemainAndZeroOnceUpToDate() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kizuna-status-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let check = ["migrate", "--status", "--fail-if-pending", "--data-dir", directory.path]

        #expect(try await MigrationKillTests.kizuna(check) == .exited(4), "no store yet: every step remains")
        #expect(try await MigrationKillTests.kizuna(["migrate", "--to", "1", "--data-dir", directory.path]) == .exited(0))
        #expect(try await MigrationKillTests.kizuna(check) == .exited(4), "schema 1 of more")
        #expect(
            try await MigrationKillTests.kizuna(["migrate", "--status", "--data-dir", directory.path]) == .exited(0),
            "without the flag, only a report")
        #expect(try await MigrationKillTests.kizuna(["migrate", "--data-dir", directory.path]) == .exited(0))
        #expect(try await MigrationKillTests.kizuna(check) == .exited(0))
    }

    @Test func theFlagNeedsStatus() async throws {
        #expect(try await MigrationKillTests.kizuna(["migrate", "--fail-if-pending"]) == .exited(64))
    }
}
