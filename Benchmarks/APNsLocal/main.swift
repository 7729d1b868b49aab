import Crypto
import Foundation
import KizunaTestSupport

// kizuna-apns-local: the tests' local APNs as a process, for Benchmarks/push.sh: HTTP/2 over TLS on 127.0.0.1,
// checking each provider token (once per token), every header and the payload size, and accepting every
// notification. Writes its certificate authority to --ca-out and prints the count each second, for the script.
//
//   kizuna-apns-local --port 0 --p8 KEY.p8 --key-id KEY123ABCD --team-id TEAM12345A --topic com.example.bench --ca-out ca.pem

var options: [String: String] = [:]
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let name = arguments.next() {
    guard name.hasPrefix("--"), let value = arguments.next() else {
        FileHandle.standardError.write(Data("usage: kizuna-apns-local --p8 FILE --key-id K --team-id T --topic T --ca-out FILE\n".utf8))
        exit(2)
    }
    options[String(name.dropFirst(2))] = value
}
guard let p8 = options["p8"], let keyId = options["key-id"], let teamId = options["team-id"], let caOut = options["ca-out"],
    let pem = try? String(contentsOfFile: p8, encoding: .utf8), let key = try? P256.Signing.PrivateKey(pemRepresentation: pem)
else {
    FileHandle.standardError.write(Data("kizuna-apns-local: --p8 (a readable P-256 key), --key-id, --team-id and --ca-out are required\n".utf8))
    exit(2)
}
let server = try await APNsTestServer.start(
    // kizuna and aioapns each sign their own provider token with the one key: both are let in.
    expecting: .init(publicKey: key.publicKey, keyId: keyId, teamId: teamId, topic: options["topic"], limitsTokenUpdates: false),
    port: Int(options["port"] ?? "0") ?? 0, keepReceived: false)
try server.certificateAuthorityPEM.write(toFile: caOut, atomically: true, encoding: .utf8)
/// Written unbuffered: the script reads the lines while the process runs.
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }
say("listening \(server.port)")
while true {
    try await Task.sleep(for: .seconds(1))
    say("received \(server.count) refused \(server.refusedCount)")
}
