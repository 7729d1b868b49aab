import ArgumentParser
import Foundation
import KizunaServer

/// `kizuna serve`'s push settings: the secret key credentials are sealed with, and where APNs is.
struct PushOptions: ParsableArguments {
    @Option(
        name: .customLong("secret-key-file"),
        help: """
            The file of the server's secret key (32 bytes), which seals APNs keys at rest; created with random bytes, \
            mode 0600, when absent. Or give the key itself as KIZUNA_SECRET_KEY (64 hex digits). Every instance sharing \
            a PostgreSQL store needs the same key. Env: KIZUNA_SECRET_KEY_FILE. Default: secret.key in the SQLite data \
            directory.
            """)
    var secretKeyFile: String?

    @Option(
        name: .customLong("apns-url"),
        help: """
            Send every push to this APNs host instead of Apple's (api.push.apple.com, api.sandbox.push.apple.com): a \
            local APNs in tests, or a proxy. Env: KIZUNA_APNS_URL.
            """)
    var apnsURL: String?

    @Option(
        name: .customLong("apns-ca-file"),
        help: "A PEM certificate to trust for the APNs host besides the system's (with --apns-url). Env: KIZUNA_APNS_CA_FILE.")
    var apnsCAFile: String?

    func apply(to configuration: inout KizunaConfiguration, _ environment: Environment) throws {
        if let text = environment["KIZUNA_SECRET_KEY"], !text.isEmpty {
            configuration.secretKey = .text(text)
        } else if let path = secretKeyFile ?? environment["KIZUNA_SECRET_KEY_FILE"], !path.isEmpty {
            configuration.secretKey = .file(path)
        }
        if let url = apnsURL ?? environment["KIZUNA_APNS_URL"], !url.isEmpty {
            guard let parsed = URL(string: url), parsed.scheme == "https", parsed.host != nil else {
                throw ValidationError("--apns-url must be an https:// URL, got '\(url)'.")
            }
            configuration.push.productionURL = url
            configuration.push.sandboxURL = url
        }
        if let path = apnsCAFile ?? environment["KIZUNA_APNS_CA_FILE"], !path.isEmpty {
            do {
                configuration.push.trustRootsPEM = try String(contentsOfFile: path, encoding: .utf8)
            } catch {
                throw ValidationError("Could not read --apns-ca-file \(path): \(error.localizedDescription)")
            }
        }
    }
}
