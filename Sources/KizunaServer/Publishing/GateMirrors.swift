import Crypto
import Foundation
import KizunaCore
import Logging
import ServiceLifecycle
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Where the gate mirrors' Ed25519 signing key comes from: derived from the server's secret key (HKDF-SHA256), or
/// the 32-byte seed in `--mirror-key-file` (created with random bytes, mode 0600, when absent), for rotation.
package final class MirrorSigningKey: Sendable {
    package enum Origin: Sendable {
        case derived(SecretKeySource)
        case file(String)
    }

    let origin: Origin
    private let resolved = Mutex<Curve25519.Signing.PrivateKey?>(nil)

    package init(_ origin: Origin) { self.origin = origin }

    /// The key, read (or derived) once.
    /// - Throws: what reading the secret key or the key file throws.
    package func key() throws(KizunaError) -> Curve25519.Signing.PrivateKey {
        if let key = resolved.withLock({ $0 }) { return key }
        let seed: Data
        switch origin {
        case .derived(let secret):
            let derived = HKDF<SHA256>.deriveKey(
                inputKeyMaterial: try secret.key().key, info: Data("kizuna gate mirror ed25519 v1".utf8), outputByteCount: 32)
            seed = derived.withUnsafeBytes { Data($0) }
        case .file(let path):
            seed = try SecretKey.file(at: path).key.withUnsafeBytes { Data($0) }
        }
        guard let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: seed) else {
            throw KizunaError(.internalError, "The gate mirror signing key could not be made.")
        }
        resolved.withLock { $0 = key }
        return key
    }

    /// The public half apps trust, with its id.
    package func publicKey() throws(KizunaError) -> GateMirror.KeyInfo {
        let key = try key().publicKey
        return GateMirror.KeyInfo(keyId: GateMirror.keyId(of: key), publicKey: GateMirror.publicKeyText(key))
    }
}

/// Signed static copies of each app's gate policy (``GateMirror``): answered to admins on demand, and with a
/// mirror directory, written to `<directory>/<app>/gate.json` on every gate publish or app change — this
/// instance's or, through the change feed, any other's — and for every app when the server starts.
package final class GateMirrors: Service {
    let live: LiveDocuments
    let apps: any AppRepository
    let signingKey: MirrorSigningKey
    /// Where mirrors are written; `nil` writes none.
    let directory: String?
    let readiness: Readiness?
    let logger: Logger
    /// Apps to write again: with the gate version a gate change published, `nil` for an app change (its store URL).
    private let changed: AsyncStream<(app: String, gateVersion: Int64?)>
    private let change: AsyncStream<(app: String, gateVersion: Int64?)>.Continuation
    /// Writes take turns, and never put an older version over a newer one.
    private let writer = MirrorWriter()

    init(
        live: LiveDocuments, apps: any AppRepository, signingKey: MirrorSigningKey, directory: String?, feed: ChangeFeed,
        readiness: Readiness?, logger: Logger
    ) {
        self.live = live
        self.apps = apps
        self.signingKey = signingKey
        self.directory = directory
        self.readiness = readiness
        self.logger = logger
        (changed, change) = AsyncStream.makeStream(of: (app: String, gateVersion: Int64?).self)
        if directory != nil {
            feed.observe { [change] record in
                if record.kind == DocumentKind.gate.rawValue { change.yield((record.entityId, record.version)) }
                if record.kind == "app" { change.yield((record.entityId, nil)) }
            }
        }
    }

    /// The public key apps trust, with its id.
    package func publicKey() throws(KizunaError) -> GateMirror.KeyInfo {
        try signingKey.publicKey()
    }

    /// The signed mirror of `app`'s live policy, and its version.
    /// - Throws: `not_found` for an unknown app.
    func signed(app: String) async throws -> (bytes: Data, version: Int64) {
        let gate = try await live.gate(app)
        let content = GateMirror.Content(
            app: app, version: gate.version, policy: gate.value.source(visibleTo: nil), storeURL: gate.app.storeURL, signedAt: Date())
        return (try GateMirror.sign(content, with: try signingKey.key()), gate.version)
    }

    /// Writes `app`'s mirror (or removes it, for a deleted app); logs and keeps going when it cannot.
    func write(app: String) async {
        guard let directory else { return }
        do {
            let signed: (bytes: Data, version: Int64)?
            do {
                signed = try await self.signed(app: app)
            } catch let error as KizunaError where error.code == .notFound {
                signed = nil
            }
            try await writer.write(signed, app: app, directory: directory)
        } catch {
            logger.error("Could not write the gate mirror", metadata: ["app": "\(app)", "error": "\(error)"])
        }
    }

    package func run() async throws {
        guard directory != nil else { return try await gracefulShutdown() }
        if let readiness {
            let state = await cancelWhenGracefulShutdown { await readiness.settled() }
            guard state == .ready else { return try await gracefulShutdown() }
        }
        // Every app once at start: a new directory, or a new signing key, is filled without a publish.
        for app in (try? await apps.list()) ?? [] { await write(app: app.id) }
        for await (app, gateVersion) in changed.cancelOnGracefulShutdown() {
            // A publish on this instance wrote its mirror before it was answered; the feed brings the same change.
            if let gateVersion, await writer.hasWritten(app, atLeast: gateVersion) { continue }
            await write(app: app)
        }
    }
}

/// Writes mirror files one at a time, atomically (a temporary file renamed over the old one), never replacing a
/// newer version — one this process wrote or, in a directory instances share, one another wrote.
private actor MirrorWriter {
    private var written: [String: Int64] = [:]

    /// Whether this process already wrote `app`'s mirror at `version` or later.
    func hasWritten(_ app: String, atLeast version: Int64) -> Bool {
        (written[app] ?? -1) >= version
    }

    func write(_ signed: (bytes: Data, version: Int64)?, app: String, directory: String) throws {
        let folder = URL(fileURLWithPath: directory).appendingPathComponent(app, isDirectory: true)
        let file = folder.appendingPathComponent("gate.json")
        guard let signed else {
            try? FileManager.default.removeItem(at: file)
            written[app] = nil
            return
        }
        let onDisk = (try? Data(contentsOf: file)).flatMap(Self.version(of:))
        guard signed.version >= max(written[app] ?? 0, onDisk ?? 0) else { return }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let temporary = folder.appendingPathComponent(".gate.json.\(UUID().uuidString)")
        try signed.bytes.write(to: temporary)
        guard rename(temporary.path, file.path) == 0 else {
            try? FileManager.default.removeItem(at: temporary)
            throw KizunaError(.internalError, "Could not put the gate mirror in place at \(file.path).")
        }
        written[app] = signed.version
    }

    /// The version a mirror file holds, read without checking its signature (it is this server's own directory).
    static func version(of data: Data) -> Int64? {
        guard let envelope = try? JSONDecoder().decode(GateMirror.Envelope.self, from: data), let payload = base64URLDecoded(envelope.payload),
            case .object(let content)? = try? JSONValue(parsing: payload), let version = content["version"]?.numberValue
        else { return nil }
        return Int64(version)
    }
}
