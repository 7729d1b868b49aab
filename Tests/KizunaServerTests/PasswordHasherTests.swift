import Foundation
import KizunaCore
import Testing

@testable import KizunaServer

@Suite("Password hashing")
struct PasswordHasherTests {
    /// Cheaper than production so the suite stays quick; the code path is the same.
    static let hasher = PasswordHasher(parameters: .init(logN: 10, r: 8, p: 1))

    @Test func hashesVerifyAndNameTheirParameters() async throws {
        let stored = try await Self.hasher.hash("correct horse battery staple")
        #expect(stored.hasPrefix("$scrypt$ln=10,r=8,p=1$"))
        #expect(stored.split(separator: "$").count == 4)
        #expect(try await Self.hasher.verify("correct horse battery staple", against: stored))
        #expect(try await !Self.hasher.verify("correct horse battery stapl", against: stored))
        #expect(try await Self.hasher.hash("same") != Self.hasher.hash("same"), "a fresh salt each time")
    }

    @Test func longPasswordsAreNotTruncated() async throws {
        // bcrypt would ignore everything after byte 72; these differ only at character 100.
        let base = String(repeating: "パスワード", count: 19)  // 95 characters, 285 UTF-8 bytes
        let stored = try await Self.hasher.hash(base + "12345")
        #expect(try await Self.hasher.verify(base + "12345", against: stored))
        #expect(try await !Self.hasher.verify(base + "12346", against: stored))
    }

    @Test func olderParametersStillVerifyAndAskForARehash() async throws {
        let old = try await Self.hasher.hash("pw-1234567")
        let raised = PasswordHasher(parameters: .init(logN: 11, r: 8, p: 1))
        #expect(try await raised.verify("pw-1234567", against: old))
        #expect(raised.needsRehash(old))
        #expect(!raised.needsRehash(try await raised.hash("pw-1234567")))
        #expect(try await !raised.verifyUnknownAccount("pw-1234567"))
    }

    @Test(arguments: [
        "", "plain", "$2b$12$abcdefghijklmnopqrstuu", "$scrypt$ln=10,r=8$AAAA$AAAA", "$scrypt$ln=99,r=8,p=1$AAAAAAAAAAAAAAAAAAAAAA$AAAA",
    ])
    func malformedHashesAreRefusedWithoutLeakingThem(stored: String) async {
        let error = await #expect(throws: KizunaError.self) { try await Self.hasher.verify("x", against: stored) }
        #expect(error?.code == .internalError && (stored.isEmpty || error?.message.contains(stored) == false))
    }

    @Test func constantTimeComparison() {
        #expect(constantTimeEquals(Data([1, 2, 3]), Data([1, 2, 3])))
        #expect(!constantTimeEquals(Data([1, 2, 3]), Data([1, 2, 4])))
        #expect(!constantTimeEquals(Data([1, 2, 3]), Data([1, 2])))
    }
}
