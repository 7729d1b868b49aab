import ArgumentParser
import Foundation
import KizunaServer

/// `kizuna serve`'s gate mirror settings: where signed copies of the gate policies are written, and their key.
struct MirrorOptions: ParsableArguments {
    @Option(
        name: .customLong("mirror-dir"),
        help: """
            Write a signed copy of each app's gate policy to DIR/<app>/gate.json on every gate publish (and at start), \
            for any static host or CDN to serve, so the SDK can still hear of maintenance when this server is down. \
            Env: KIZUNA_MIRROR_DIR. Default: none.
            """)
    var mirrorDirectory: String?

    @Option(
        name: .customLong("mirror-key-file"),
        help: """
            The mirrors' Ed25519 signing key: a 32-byte seed file, created with random bytes (mode 0600) when absent; \
            give a new file to rotate the key (see the README). Env: KIZUNA_MIRROR_KEY_FILE. Default: derived from the \
            secret key.
            """)
    var mirrorKeyFile: String?

    func apply(to configuration: inout KizunaConfiguration, _ environment: Environment) {
        if let directory = mirrorDirectory ?? environment["KIZUNA_MIRROR_DIR"], !directory.isEmpty { configuration.mirrorDirectory = directory }
        if let path = mirrorKeyFile ?? environment["KIZUNA_MIRROR_KEY_FILE"], !path.isEmpty { configuration.mirrorKeyFile = path }
    }
}
