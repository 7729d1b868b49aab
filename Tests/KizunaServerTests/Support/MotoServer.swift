import Foundation
import Subprocess
import Testing

/// moto's S3 API server (`pip install 'moto[server]'`) as a child process for the length of a closure: an
/// S3-compatible endpoint that runs here. `.ci/run` installs it; elsewhere its tests are skipped, with the reason,
/// when `moto_server` is missing — under `CI=true` they run and fail instead.
enum MotoServer {
    static let isCI = ProcessInfo.processInfo.environment["CI"] == "true"
    /// Whether pip installed moto's server (its `moto_server` command is on the PATH): found without starting a process.
    static let installed: Bool = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").contains {
        FileManager.default.isExecutableFile(atPath: "\($0)/moto_server")
    }
    static let shouldRun = installed || isCI
    static let skipReason: Comment = "moto is not installed (pip install 'moto[server]'); .ci/run installs it"

    /// Runs moto on a port it picks while `body` runs with its endpoint (`http://127.0.0.1:PORT`); killed after.
    static func run<R: Sendable>(_ body: @Sendable (String) async throws -> R) async throws -> R {
        try #require(installed, "CI=true: moto must be installed (pip install 'moto[server]')")
        let result = try await Subprocess.run(
            .name("moto_server"), arguments: ["-H", "127.0.0.1", "-p", "0"], input: .none, output: .sequence, error: .combinedWithOutput
        ) { execution in
            let (ports, found) = AsyncStream<Int>.makeStream()
            return try await withThrowingTaskGroup(of: Void.self) { group in
                // Reads the output to its end, so moto's request log never fills the pipe; its "Running on" line
                // is the readiness event.
                group.addTask {
                    var seen: [String] = []
                    for try await line in execution.standardOutput.strings() {
                        if let range = line.range(of: "Running on http://127.0.0.1:"),
                            let port = Int(line[range.upperBound...].prefix { $0.isNumber })
                        {
                            found.yield(port)
                        } else if seen.count < 50 {
                            seen.append(line)
                        }
                    }
                    found.finish()
                    if seen.contains(where: { $0.contains("Traceback") }) { Issue.record("moto failed:\n\(seen.joined(separator: "\n"))") }
                }
                defer { try? execution.send(signal: .kill) }
                var iterator = ports.makeAsyncIterator()
                guard let port = await iterator.next() else { throw MotoDidNotStart() }
                let value = try await body("http://127.0.0.1:\(port)")
                try? execution.send(signal: .kill)
                try await group.waitForAll()
                return value
            }
        }
        return result.closureResult
    }

    struct MotoDidNotStart: Error, CustomStringConvertible {
        var description: String { "moto_server ended without saying where it listens" }
    }
}
