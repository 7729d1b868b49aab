import Foundation
import KizunaCore
import Testing

@testable import KizunaServer

/// The server's key for secrets at rest: from text or a file (created 0600 with random bytes when absent), sealing
/// with AES-GCM bound to a context, refusing another key, another context and changed bytes.
@Suite("Secret key")
struct SecretKeyTests {
    @Test func aSealedSecretOpensOnlyWithItsKeyAndContext() throws {
        let key = try SecretKey(text: String(repeating: "ab", count: 32))
        let secret = Data("-----BEGIN PRIVATE KEY-----\nMIGT…\n-----END PRIVATE KEY-----\n".utf8)
        let sealed = try key.seal(secret, context: "shop")
        #expect(sealed.range(of: secret) == nil && sealed.count == secret.count + 28)  // nonce 12 + tag 16
        #expect(try key.open(sealed, context: "shop") == secret)
        #expect(throws: KizunaError.self) { try key.open(sealed, context: "other-app") }
        var changed = sealed
        changed[20] ^= 1
        #expect(throws: KizunaError.self) { try key.open(changed, context: "shop") }
        let other = try SecretKey(bytes: Data(repeating: 7, count: 32))
        #expect(throws: KizunaError.self) { try other.open(sealed, context: "shop") }
        // Base64 says the same key as hex.
        let base64 = Data(repeating: 0xab, count: 32).base64EncodedString()
        #expect(try SecretKey(text: base64).open(sealed, context: "shop") == secret)
    }

    @Test func aKeyFileIsCreatedOwnerOnlyAndReadBackTheSame() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kizuna-key-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("secret.key").path
        let first = try SecretKey.file(at: path)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600 && (attributes[.size] as? NSNumber)?.intValue == 32)
        let sealed = try first.seal(Data("p8".utf8), context: "shop")
        #expect(try SecretKey.file(at: path).open(sealed, context: "shop") == Data("p8".utf8))
    }

    @Test(arguments: ["abcd", String(repeating: "zz", count: 32), Data(repeating: 1, count: 16).base64EncodedString()])
    func aKeyOfTheWrongSizeOrFormIsRefused(_ text: String) {
        #expect { try SecretKey(text: text) } throws: { ($0 as? KizunaError)?.field == "secretKey" }
    }
}
