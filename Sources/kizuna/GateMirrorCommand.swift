import ArgumentParser
import Foundation
import KizunaClient
import KizunaCore
import KizunaServer

extension GateCommand {
    /// `kizuna gate mirror`: the signed static copy of an app's gate policy, on demand, or the key apps trust.
    struct Mirror: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write an app's signed gate mirror to a directory, or print the public key apps trust.",
            discussion: """
                `--out DIR` writes DIR/<app>/gate.json, the file `kizuna serve --mirror-dir` writes on every gate \
                publish, for any static host or CDN. `--public-key` prints the key to pass to the SDK \
                (GateMirrorSettings); with `--key-file FILE` it prints the public half of that key file instead, \
                creating it (32 random bytes, mode 0600) when absent, without a server: the first step of rotating \
                the key (see the README).
                """
        )

        @Option(name: .customLong("out"), help: "The directory to write <app>/gate.json in.") var directory: String?
        @Flag(name: .customLong("public-key"), help: "Print the public key (and its id) apps trust instead.") var publicKey = false
        @Option(name: .customLong("key-file"), help: "With --public-key: the key file to read (or create), not the server's key.")
        var keyFile: String?
        @OptionGroup var target: AppTarget

        func validate() throws {
            guard (directory != nil) != publicKey else { throw ValidationError("Give either --out DIR or --public-key.") }
            if keyFile != nil && !publicKey { throw ValidationError("--key-file goes with --public-key.") }
        }

        func run() async throws {
            if publicKey {
                let key: GateMirror.KeyInfo
                if let keyFile {
                    key = try MirrorSigningKey(.file(keyFile)).publicKey()
                } else {
                    key = try await target.server.client(.process).gateMirrorKey()
                }
                if target.output.json { return try target.output.printJSON(key) }
                print("\(key.publicKey)  (key id \(key.keyId))")
                return
            }
            let (client, app) = try target.resolve()
            let bytes = try await client.gateMirror(app: app)
            let folder = URL(fileURLWithPath: directory ?? ".").appendingPathComponent(app, isDirectory: true)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let file = folder.appendingPathComponent("gate.json")
            try bytes.write(to: file, options: .atomic)
            print("Wrote \(file.path).")
        }
    }
}
