import Foundation
import KizunaCore

/// A small store for secrets — session tokens, API keys, passwords — with one API on every platform.
///
/// On Apple platforms it is the Keychain (generic passwords under one service, optionally in an access group). On
/// Linux, and wherever you pass ``FileOptions``, it is an encrypted file store: one AES-GCM sealed file per item,
/// files and key readable only by their owner (0600), every write atomic so a crash keeps the old value, and an
/// altered file or a wrong key reported as `corrupted` rather than read as garbage.
///
/// ```swift
/// let store = SecureStore(service: "com.example.shop")
/// store["session"] = token                               // errors ignored, as with a dictionary
/// try store.label("Shop session").set(token, forKey: "session")   // options chain per call
/// let token = try store.string(forKey: "session")
/// ```
public struct SecureStore: Sendable {
    /// The service the items belong to (the Keychain's `kSecAttrService`).
    public let service: String
    /// The Keychain access group shared between apps of one team, if any.
    public let accessGroup: String?
    let options: ItemOptions
    let backend: any SecureStoreBackend

    /// When an Apple device lets the Keychain item be read (ignored by the file store).
    public enum Accessibility: String, Sendable, Hashable {
        case whenUnlocked, afterFirstUnlock, whenUnlockedThisDeviceOnly, afterFirstUnlockThisDeviceOnly, whenPasscodeSetThisDeviceOnly
    }

    /// What is known about a stored item besides its value.
    public struct Attributes: Sendable, Hashable, Codable {
        public var label: String?
        public var comment: String?
        public var created: Date
        public var modified: Date
    }

    /// Per-call options, set by chaining (``label(_:)``, ``comment(_:)``, ``accessibility(_:)``, ``synchronizable(_:)``).
    struct ItemOptions: Sendable, Hashable {
        var label: String?
        var comment: String?
        var accessibility: Accessibility = .afterFirstUnlock
        var synchronizable = false
    }

    /// Where the encrypted file store keeps its files, and where its key comes from.
    public struct FileOptions: Sendable {
        /// The directory (created with 0700 if missing).
        public var directory: URL
        /// The key source.
        public var key: KeySource
        /// log2 of scrypt's N for a passphrase key. Fixed for a store (its `store.check` would refuse another); the
        /// suite lowers it, as 2^15 costs a second of one CPU-bound thread per derivation in a debug build.
        package var passphraseCost = 15

        /// Where the file store's key comes from.
        public enum KeySource: Sendable {
            /// A random 256-bit key in a 0600 file in the store's directory, created on first use.
            case keyFile
            /// A key derived from a passphrase the app supplies, with scrypt (N = 2^15, r = 8, p = 1) and a random
            /// salt kept next to the items.
            case passphrase(String)
        }

        /// Creates file options.
        public init(directory: URL, key: KeySource = .keyFile) {
            self.directory = directory
            self.key = key
        }
    }

    /// The platform's store: the Keychain on Apple platforms; on Linux the encrypted file store in
    /// `$XDG_DATA_HOME/kizuna/secure-store` (or `~/.local/share/…`) with a key file.
    /// - Parameters:
    ///   - service: The service the items belong to, such as your bundle id.
    ///   - accessGroup: A Keychain access group (Apple platforms only).
    public init(service: String, accessGroup: String? = nil) {
        self.service = service
        self.accessGroup = accessGroup
        options = ItemOptions()
        #if canImport(Security)
            backend = KeychainBackend(service: service, accessGroup: accessGroup)
        #else
            let environment = ProcessInfo.processInfo.environment
            let base =
                environment["XDG_DATA_HOME"].map(URL.init(fileURLWithPath:))
                ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share")
            backend = LazyFileBackend(service: service, options: FileOptions(directory: base.appendingPathComponent("kizuna/secure-store")))
        #endif
    }

    /// The encrypted file store, on any platform.
    /// - Throws: `bad_request` when the directory cannot be created; `corrupted` when an existing key file or
    ///   salt is damaged.
    public init(service: String, fileOptions: FileOptions) throws(KizunaError) {
        self.service = service
        accessGroup = nil
        options = ItemOptions()
        backend = try EncryptedFileBackend(service: service, options: fileOptions)
    }

    private init(copying store: SecureStore, options: ItemOptions) {
        service = store.service
        accessGroup = store.accessGroup
        backend = store.backend
        self.options = options
    }

    // MARK: Chained options

    /// The same store, labelling items written through it.
    public func label(_ label: String) -> SecureStore { with { $0.label = label } }
    /// The same store, attaching a comment to items written through it.
    public func comment(_ comment: String) -> SecureStore { with { $0.comment = comment } }
    /// The same store, writing items with this accessibility (Keychain only).
    public func accessibility(_ accessibility: Accessibility) -> SecureStore { with { $0.accessibility = accessibility } }
    /// The same store, writing items that sync through iCloud Keychain (Keychain only).
    public func synchronizable(_ synchronizable: Bool) -> SecureStore { with { $0.synchronizable = synchronizable } }

    private func with(_ change: (inout ItemOptions) -> Void) -> SecureStore {
        var options = options
        change(&options)
        return SecureStore(copying: self, options: options)
    }

    // MARK: Values

    /// Stores `value` (as UTF-8) under `key`, replacing what was there.
    public func set(_ value: String, forKey key: String) throws(KizunaError) {
        try set(Data(value.utf8), forKey: key)
    }

    /// Stores `value` under `key`, replacing what was there.
    public func set(_ value: Data, forKey key: String) throws(KizunaError) {
        try backend.write(value, forKey: key, options: options)
    }

    /// The value under `key` as a string, or `nil` when there is none.
    /// - Throws: `corrupted` when the item fails its integrity check or is not UTF-8.
    public func string(forKey key: String) throws(KizunaError) -> String? {
        guard let data = try data(forKey: key) else { return nil }
        guard let string = String(data: data, encoding: .utf8) else {
            throw KizunaError(.corrupted, "The item '\(key)' in \(service) is not text; read it with data(forKey:).", field: key)
        }
        return string
    }

    /// The value under `key`, or `nil` when there is none.
    /// - Throws: `corrupted` when the item fails its integrity check.
    public func data(forKey key: String) throws(KizunaError) -> Data? {
        try backend.read(key)?.value
    }

    /// The item's label, comment and dates, or `nil` when there is none.
    public func attributes(forKey key: String) throws(KizunaError) -> Attributes? {
        try backend.read(key)?.attributes
    }

    /// Removes the item under `key`, if there is one.
    public func remove(_ key: String) throws(KizunaError) {
        try backend.remove(key)
    }

    /// Removes every item of this service.
    public func removeAll() throws(KizunaError) {
        try backend.removeAll()
    }

    /// The keys of every item of this service, sorted.
    public func allKeys() throws(KizunaError) -> [String] {
        try backend.keys().sorted()
    }

    /// The string under `key`; setting `nil` removes it. Errors read as `nil` and are otherwise ignored — use the
    /// throwing methods where they matter.
    public subscript(key: String) -> String? {
        get { (try? string(forKey: key)) ?? nil }
        nonmutating set {
            if let newValue { try? set(newValue, forKey: key) } else { try? remove(key) }
        }
    }
}

/// One stored item.
struct SecureItem: Sendable, Codable {
    var key: String
    var value: Data
    var attributes: SecureStore.Attributes
}

/// Where a ``SecureStore`` keeps its items.
protocol SecureStoreBackend: Sendable {
    func read(_ key: String) throws(KizunaError) -> SecureItem?
    func write(_ value: Data, forKey key: String, options: SecureStore.ItemOptions) throws(KizunaError)
    func remove(_ key: String) throws(KizunaError)
    func removeAll() throws(KizunaError)
    func keys() throws(KizunaError) -> [String]
}

/// The default Linux store, opened on first use (so that `SecureStore(service:)` cannot fail) and then kept.
final class LazyFileBackend: SecureStoreBackend {
    let service: String
    let options: SecureStore.FileOptions
    private let opened = Locked<EncryptedFileBackend?>(nil)

    init(service: String, options: SecureStore.FileOptions) {
        self.service = service
        self.options = options
    }

    private func open() throws(KizunaError) -> EncryptedFileBackend {
        try opened.withLock { (backend: inout EncryptedFileBackend?) throws(KizunaError) -> EncryptedFileBackend in
            if let backend { return backend }
            let created = try EncryptedFileBackend(service: service, options: options)
            backend = created
            return created
        }
    }

    func read(_ key: String) throws(KizunaError) -> SecureItem? { try open().read(key) }
    func write(_ value: Data, forKey key: String, options: SecureStore.ItemOptions) throws(KizunaError) {
        try open().write(value, forKey: key, options: options)
    }
    func remove(_ key: String) throws(KizunaError) { try open().remove(key) }
    func removeAll() throws(KizunaError) { try open().removeAll() }
    func keys() throws(KizunaError) -> [String] { try open().keys() }
}
