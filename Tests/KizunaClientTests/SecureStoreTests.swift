import Foundation
import KizunaCore
import Testing

@testable import KizunaClient

@Suite("SecureStore (encrypted file store)")
struct SecureStoreTests {
    static func directory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("kizuna-secure-\(UUID().uuidString)")
    }

    static func permissions(_ url: URL) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int)
    }

    @Test func roundTripsStringsDataUnicodeKeysAndLargeValues() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SecureStore(service: "com.example.shop", fileOptions: .init(directory: directory))
        #expect(try store.string(forKey: "session") == nil)

        try store.set("kzs_secret", forKey: "session")
        store["鍵🔑"] = "値"
        try store.set("é composed", forKey: "caf\u{E9}")
        let large = Data((0..<4_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try store.set(large, forKey: "blob")

        #expect(try store.string(forKey: "session") == "kzs_secret")
        #expect(store["鍵🔑"] == "値")
        #expect(try store.string(forKey: "cafe\u{301}") == "é composed", "decomposed é is the same key, as Swift compares strings")
        #expect(try store.data(forKey: "blob") == large)
        #expect(try store.allKeys() == ["blob", "caf\u{E9}", "session", "鍵🔑"])
        let notText = #expect(throws: KizunaError.self) { try store.string(forKey: "blob") }
        #expect(notText?.code == .corrupted)

        // A second store over the same directory (a relaunch) reads the same items; another service sees none.
        let relaunched = try SecureStore(service: "com.example.shop", fileOptions: .init(directory: directory))
        #expect(relaunched["session"] == "kzs_secret")
        let other = try SecureStore(service: "com.example.other", fileOptions: .init(directory: directory))
        #expect(try other.allKeys().isEmpty && other["session"] == nil)
        other["session"] = "other"
        #expect(store["session"] == "kzs_secret")

        store["session"] = nil
        #expect(try store.string(forKey: "session") == nil)
        try store.remove("never-there")
        try store.removeAll()
        #expect(try store.allKeys().isEmpty && other["session"] == "other")

        // Owner-only files.
        #expect(try Self.permissions(directory) == 0o700)
        #expect(try Self.permissions(directory.appendingPathComponent("store.key")) == 0o600)
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            #expect(try Self.permissions(directory.appendingPathComponent(name)) == 0o600, "\(name)")
        }
    }

    @Test func attributesAndChainedOptions() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SecureStore(service: "svc", fileOptions: .init(directory: directory))
        try store.label("Shop session").comment("signed in as mio").accessibility(.afterFirstUnlockThisDeviceOnly).set("a", forKey: "session")
        let first = try #require(try store.attributes(forKey: "session"))
        #expect(first.label == "Shop session" && first.comment == "signed in as mio" && first.created == first.modified)
        try store.label("Renewed").set("b", forKey: "session")
        let second = try #require(try store.attributes(forKey: "session"))
        #expect(second.label == "Renewed" && second.comment == nil && second.created == first.created && second.modified >= first.modified)
        #expect(try store.attributes(forKey: "missing") == nil)
    }

    /// Passphrase options at scrypt N = 2^10: the derivation is the production code's, at a cost a debug build runs
    /// in milliseconds rather than blocking one of the suite's two threads for seconds.
    static func passphrase(_ passphrase: String, in directory: URL) -> SecureStore.FileOptions {
        var options = SecureStore.FileOptions(directory: directory, key: .passphrase(passphrase))
        options.passphraseCost = 10
        return options
    }

    @Test func tamperingAndTheWrongKeyAreReportedNotReadAsGarbage() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SecureStore(service: "svc", fileOptions: Self.passphrase("correct horse", in: directory))
        try store.set("token", forKey: "session")
        #expect(try SecureStore(service: "svc", fileOptions: Self.passphrase("correct horse", in: directory))["session"] == "token")

        let wrong = #expect(throws: KizunaError.self) {
            try SecureStore(service: "svc", fileOptions: Self.passphrase("battery staple", in: directory))
        }
        #expect(wrong?.code == .corrupted && wrong?.message.contains("different key or passphrase") == true)

        let item = try #require(try FileManager.default.contentsOfDirectory(atPath: directory.path).first { $0.hasSuffix(".item") })
        let url = directory.appendingPathComponent(item)
        var bytes = try Data(contentsOf: url)
        bytes[bytes.count - 5] ^= 0x01
        try bytes.write(to: url)
        let tampered = #expect(throws: KizunaError.self) { try store.string(forKey: "session") }
        #expect(tampered?.code == .corrupted)

        try Data("short".utf8).write(to: directory.appendingPathComponent("store.key"))
        let damagedKey = #expect(throws: KizunaError.self) { try SecureStore(service: "svc", fileOptions: .init(directory: directory)) }
        #expect(damagedKey?.code == .corrupted && damagedKey?.message.contains("store.key") == true)
    }

    @Test func aCrashMidWriteKeepsTheOldValue() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SecureStore(service: "svc", fileOptions: .init(directory: directory))
        try store.set("old", forKey: "session")
        // What a crash between writing the temporary file and renaming it leaves behind.
        try Data("KZS1 half-written".utf8).write(to: directory.appendingPathComponent(".\(UUID().uuidString).tmp"))
        #expect(try store.string(forKey: "session") == "old")
        #expect(try store.allKeys() == ["session"])
        try store.set("new", forKey: "session")
        #expect(try store.string(forKey: "session") == "new")
    }

    @Test func concurrentWritersLeaveEveryItemWhole() throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try SecureStore(service: "svc", fileOptions: .init(directory: directory))
        let writers = 8
        let writes = 40
        DispatchQueue.concurrentPerform(iterations: writers) { writer in
            // Each writer has its own store value over the same files, as separate processes would.
            let own = try! SecureStore(service: "svc", fileOptions: .init(directory: directory))
            for index in 0..<writes {
                try! own.set("writer \(writer) write \(index)", forKey: "shared")
                try! own.set("\(index)", forKey: "own-\(writer)")
            }
        }
        let shared = try #require(try store.string(forKey: "shared"))
        #expect(shared.hasPrefix("writer ") && shared.hasSuffix("write \(writes - 1)"))
        for writer in 0..<writers { #expect(try store.string(forKey: "own-\(writer)") == "\(writes - 1)") }
        #expect(try store.allKeys().count == writers + 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).allSatisfy { !$0.hasSuffix(".tmp") })
    }
}
