import Crypto
import CryptoExtras
import Foundation
import KizunaCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The encrypted file store behind ``SecureStore`` on Linux.
///
/// - One file per item, named by an HMAC of service and key (names do not leak), holding `KZS1` and an AES-GCM
///   sealed box of the item. The file's name and the service are the box's authenticated data, so an item copied
///   under another name or service fails to open.
/// - Writes go to a 0600 temporary file in the same directory, then `rename(2)` over the item: a crash leaves
///   the old item and at worst a stray temporary file, which reads ignore.
/// - The key is 32 random bytes in `store.key` (0600), or derived from a passphrase with scrypt and the salt in
///   `store.salt`; both are created once, race-free, with `link(2)`.
struct EncryptedFileBackend: SecureStoreBackend {
    let service: String
    let directory: URL
    private let key: SymmetricKey
    /// The start of this service's file names; other services share the directory.
    private let servicePrefix: String

    private static let magic = Data("KZS1".utf8)
    private static let itemSuffix = ".item"

    init(service: String, options: SecureStore.FileOptions) throws(KizunaError) {
        self.service = service
        directory = options.directory
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw KizunaError(.badRequest, "The secure store's directory \(directory.path) could not be created: \(error.localizedDescription)")
        }
        switch options.key {
        case .keyFile:
            key = SymmetricKey(data: try Self.randomFile(directory.appendingPathComponent("store.key"), length: 32))
        case .passphrase(let passphrase):
            let salt = try Self.randomFile(directory.appendingPathComponent("store.salt"), length: 16)
            do {
                key = try KDF.Scrypt.deriveKey(
                    from: Data(passphrase.utf8), salt: salt, outputByteCount: 32, rounds: 1 << options.passphraseCost, blockSize: 8, parallelism: 1)
            } catch {
                throw KizunaError(.internalError, "The secure store's key could not be derived: \(error)")
            }
        }
        try Self.verify(key, in: directory)
        servicePrefix = hex(HMAC<SHA256>.authenticationCode(for: Data(service.utf8), using: key).prefix(6)) + "-"
    }

    /// Item names are derived from the key, so a wrong key would find nothing rather than fail. `store.check`, a
    /// box sealed with the first key the store saw, turns a wrong key or passphrase into an error at once.
    private static func verify(_ key: SymmetricKey, in directory: URL) throws(KizunaError) {
        let purpose = Data("kizuna secure store".utf8)
        let data = try AtomicFile.createOnce(directory.appendingPathComponent("store.check")) { () throws(KizunaError) -> Data in
            guard let sealed = try? AES.GCM.seal(purpose, using: key).combined else {
                throw KizunaError(.internalError, "The secure store's key check could not be sealed.")
            }
            return sealed
        }
        guard let box = try? AES.GCM.SealedBox(combined: data), (try? AES.GCM.open(box, using: key)) == purpose else {
            throw KizunaError(
                .corrupted, "The secure store in \(directory.path) was created with a different key or passphrase (or store.check was altered).")
        }
    }

    /// A file of `length` random bytes, created once.
    private static func randomFile(_ url: URL, length: Int) throws(KizunaError) -> Data {
        let data = try AtomicFile.createOnce(url) { randomBytes(length) }
        guard data.count == length else {
            throw KizunaError(.corrupted, "\(url.path) has \(data.count) bytes, not \(length); restore it or remove the store.")
        }
        return data
    }

    func read(_ key: String) throws(KizunaError) -> SecureItem? {
        let name = fileName(key)
        guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path) else { return nil }
        let item = try open(data, name: name)
        guard item.key == key else { throw corrupted(name, "it belongs to another key") }
        return item
    }

    func write(_ value: Data, forKey key: String, options: SecureStore.ItemOptions) throws(KizunaError) {
        let now = Date()
        let created = (try? read(key))??.attributes.created ?? now
        let item = SecureItem(
            key: key, value: value,
            attributes: SecureStore.Attributes(label: options.label, comment: options.comment, created: created, modified: now))
        let name = fileName(key)
        let sealed: Data
        do {
            let plain = try JSONEncoder().encode(item)
            sealed = Self.magic + (try AES.GCM.seal(plain, using: self.key, authenticating: authenticatedData(name)).combined ?? Data())
        } catch {
            throw KizunaError(.internalError, "The item '\(key)' could not be encrypted: \(error)")
        }
        try AtomicFile.replace(directory.appendingPathComponent(name), with: sealed)
    }

    func remove(_ key: String) throws(KizunaError) {
        let url = directory.appendingPathComponent(fileName(key))
        guard unlink(url.path) == 0 || errno == ENOENT else {
            throw KizunaError(.internalError, "\(url.path) could not be removed: \(String(cString: strerror(errno)))")
        }
    }

    func removeAll() throws(KizunaError) {
        for name in try itemFiles() {
            let path = directory.appendingPathComponent(name).path
            guard unlink(path) == 0 || errno == ENOENT else {
                throw KizunaError(.internalError, "\(path) could not be removed: \(String(cString: strerror(errno)))")
            }
        }
    }

    func keys() throws(KizunaError) -> [String] {
        var keys: [String] = []
        for name in try itemFiles() {
            guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path) else { continue }
            keys.append(try open(data, name: name).key)
        }
        return keys
    }

    /// This service's item files: other services share the directory but their names differ, and their boxes
    /// would not open under this service's authenticated data, so they are told apart by a cheap name prefix.
    private func itemFiles() throws(KizunaError) -> [String] {
        do {
            return try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
                $0.hasPrefix(servicePrefix) && $0.hasSuffix(Self.itemSuffix)
            }
        } catch {
            throw KizunaError(.internalError, "The secure store's directory \(directory.path) could not be listed: \(error.localizedDescription)")
        }
    }

    /// Keys are normalised to NFC first: Swift calls `"é"` composed and decomposed equal, so the store does too.
    private func fileName(_ itemKey: String) -> String {
        let normalized = itemKey.precomposedStringWithCanonicalMapping
        let mac = HMAC<SHA256>.authenticationCode(for: Data((service + "\u{0}" + normalized).utf8), using: key)
        return servicePrefix + hex(mac) + Self.itemSuffix
    }

    private func authenticatedData(_ name: String) -> Data { Data("\(service)\u{0}\(name)".utf8) }

    private func open(_ data: Data, name: String) throws(KizunaError) -> SecureItem {
        guard data.starts(with: Self.magic) else { throw corrupted(name, "it is not a secure store item") }
        do {
            let box = try AES.GCM.SealedBox(combined: data.dropFirst(Self.magic.count))
            let plain = try AES.GCM.open(box, using: key, authenticating: authenticatedData(name))
            return try JSONDecoder().decode(SecureItem.self, from: plain)
        } catch {
            throw corrupted(name, "it was altered, or the store is opened with a different key or passphrase")
        }
    }

    private func corrupted(_ name: String, _ reason: String) -> KizunaError {
        KizunaError(.corrupted, "The secure store item \(directory.appendingPathComponent(name).path) cannot be read: \(reason).")
    }
}
