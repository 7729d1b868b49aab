import Crypto
import Foundation
import KizunaCore
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The server's key for secrets it keeps at rest (APNs signing keys): AES-256-GCM, 32 random bytes, never in the store.
///
/// It comes from `KIZUNA_SECRET_KEY` (64 hex digits or base64), or from a file (`--secret-key-file`; by default
/// `secret.key` in the data directory), which is created with fresh random bytes, readable by its owner only, when
/// it does not exist. A copy of the store alone therefore holds no usable secret. Several instances sharing one
/// PostgreSQL store must be given the same key.
package struct SecretKey: Sendable {
    let key: SymmetricKey

    package init(bytes: some ContiguousBytes) throws(KizunaError) {
        let key = SymmetricKey(data: bytes)
        guard key.bitCount == 256 else {
            throw KizunaError(.validationFailed, "The secret key must be 32 bytes; this one is \(key.bitCount / 8).", field: "secretKey")
        }
        self.key = key
    }

    /// The key `KIZUNA_SECRET_KEY` holds: 64 hex digits, or the base64 of 32 bytes.
    package init(text: String) throws(KizunaError) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.count == 64, let bytes = hexDecoded(trimmed) {
            try self.init(bytes: bytes)
        } else if let bytes = Data(base64Encoded: trimmed) {
            try self.init(bytes: bytes)
        } else {
            throw KizunaError(.validationFailed, "The secret key must be 64 hex digits or the base64 of 32 bytes.", field: "secretKey")
        }
    }

    /// The key in `path`, created (32 random bytes, mode 0600) when the file does not exist.
    package static func file(at path: String) throws(KizunaError) -> SecretKey {
        let manager = FileManager.default
        if !manager.fileExists(atPath: path) {
            let bytes = SymmetricKey(size: .bits256).withUnsafeBytes { Data($0) }
            let directory = (path as NSString).deletingLastPathComponent
            do {
                if !directory.isEmpty { try manager.createDirectory(atPath: directory, withIntermediateDirectories: true) }
            } catch {
                throw KizunaError(.internalError, "Could not create the directory of the secret key file \(path): \(error)", field: "secretKeyFile")
            }
            // Created exclusively (an instance starting at the same moment keeps the file the other wrote) and
            // readable by its owner only, from the first byte.
            #if canImport(Glibc)
                let descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
            #else
                let descriptor = Darwin.open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
            #endif
            if descriptor >= 0 {
                let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                let synced = fsync(descriptor)
                close(descriptor)
                guard written == bytes.count, synced == 0 else {
                    unlink(path)
                    throw KizunaError(.internalError, "Could not write the secret key file \(path).", field: "secretKeyFile")
                }
            } else if errno != EEXIST {
                throw KizunaError(.internalError, "Could not create the secret key file \(path) (errno \(errno)).", field: "secretKeyFile")
            }
        }
        guard let bytes = manager.contents(atPath: path) else {
            throw KizunaError(.internalError, "Could not read the secret key file \(path).", field: "secretKeyFile")
        }
        return try SecretKey(bytes: bytes)
    }

    /// `plaintext` sealed: nonce, ciphertext and tag in AES-GCM's combined form, bound to `context` (an app id), so a
    /// sealed secret copied to another row does not open there.
    package func seal(_ plaintext: Data, context: String) throws(KizunaError) -> Data {
        do {
            guard let combined = try AES.GCM.seal(plaintext, using: key, authenticating: Data(context.utf8)).combined else {
                throw KizunaError(.internalError, "AES-GCM gave no combined box.")
            }
            return combined
        } catch let error as KizunaError {
            throw error
        } catch {
            throw KizunaError(.internalError, "A secret could not be sealed: \(error)")
        }
    }

    /// The plaintext of a sealed secret.
    /// - Throws: `internal_error` when it was sealed under another key or context, or changed since.
    package func open(_ sealed: Data, context: String) throws(KizunaError) -> Data {
        do {
            return try AES.GCM.open(try AES.GCM.SealedBox(combined: sealed), using: key, authenticating: Data(context.utf8))
        } catch {
            throw KizunaError(
                .internalError, "A stored secret does not open with this server's secret key (another key, or the stored bytes changed).")
        }
    }
}

/// Where the server's ``SecretKey`` comes from, read (and its file created) the first time a secret is sealed or
/// opened, not at every start: a server that keeps no secret needs no key.
package final class SecretKeySource: Sendable {
    /// `KIZUNA_SECRET_KEY`'s text, or a file (created when absent), or neither (a PostgreSQL store without a key).
    package enum Origin: Sendable, Hashable {
        case text(String)
        case file(String)
        case unset
    }

    let origin: Origin
    private let resolved = Mutex<SecretKey?>(nil)

    package init(_ origin: Origin) { self.origin = origin }

    /// The key: from ``origin``, read once.
    /// - Throws: `validation_failed` when there is none (instances sharing a PostgreSQL store must share one), or when
    ///   it is malformed.
    package func key() throws(KizunaError) -> SecretKey {
        if let key = resolved.withLock({ $0 }) { return key }
        let key: SecretKey
        switch origin {
        case .text(let text): key = try SecretKey(text: text)
        case .file(let path): key = try SecretKey.file(at: path)
        case .unset:
            throw KizunaError(
                .validationFailed,
                "This server has no secret key to keep secrets with: give every instance sharing the PostgreSQL store the same one, "
                    + "as KIZUNA_SECRET_KEY (64 hex digits) or --secret-key-file.", field: "secretKey")
        }
        resolved.withLock { $0 = key }
        return key
    }
}
