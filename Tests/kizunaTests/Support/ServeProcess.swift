import Foundation
import Subprocess
import Testing

#if canImport(System)
    import System
#else
    import SystemPackage
#endif

/// The `kizuna` binary running in a child process (a server, typically) for the length of a closure, its standard
/// output and error read as lines while it runs, stopped with whatever signal the test sends.
///
/// swift-subprocess starts it (with every other descriptor of this process closed in the child, and its end awaited
/// through a pidfd). Foundation's `Process` is not used: on Linux it copies each `/proc/self/fd` entry as a whole
/// 256-byte `dirent` name, which reads past the end of the directory buffer and crashed the suite once the test
/// process had a thousand-odd descriptors open (a fix landed in swift-corelibs-foundation after Swift 6.3).
final class ServeProcess {
    private var lines: SubprocessOutputSequence.StringSequence<UTF8>.AsyncIterator
    private let signal: (Subprocess.Signal) throws -> Void
    /// Every line read so far.
    private(set) var seen: [String] = []
    /// Whether the output has ended, which it does when the process ends.
    private var ended = false

    private init(lines: SubprocessOutputSequence.StringSequence<UTF8>.AsyncIterator, signal: @escaping (Subprocess.Signal) throws -> Void) {
        self.lines = lines
        self.signal = signal
    }

    /// Runs `kizuna <arguments>` while `body` runs; answers what `body` returned and how the process ended. A process
    /// whose end `body` did not see (by ``stop(_:)`` or by reading all its output) is killed when `body` returns, so
    /// the run never waits on a live server.
    /// - Parameters:
    ///   - executable: Which of the package's executables (`kizuna`, `kizuna-chat`), or an absolute path to another
    ///     program (nginx).
    ///   - environment: Variables set for the child, beside this process's.
    static func run<R: Sendable>(
        _ arguments: [String], executable: String = "kizuna", environment: [String: String] = [:], _ body: (ServeProcess) async throws -> R
    ) async throws -> (value: R, status: TerminationStatus) {
        let result = try await Subprocess.run(
            .path(executable.hasPrefix("/") ? FilePath(executable) : try binary(executable)), arguments: Arguments(arguments),
            environment: .inherit.updating(
                Dictionary(uniqueKeysWithValues: environment.map { (Environment.Key(stringLiteral: $0.key), Optional($0.value)) })),
            input: .none, output: .sequence, error: .combinedWithOutput
        ) { execution in
            let process = ServeProcess(lines: execution.standardOutput.strings().makeAsyncIterator()) {
                try execution.send(signal: $0)
            }
            let value = try await body(process)
            if !process.ended { try? process.signal(.kill) }
            await process.readToEnd()
            return value
        }
        return (result.closureResult, result.terminationStatus)
    }

    /// The first value `extract` finds in the lines seen so far or read next; `nil` when the output ends first.
    func find<T>(_ extract: (String) -> T?) async -> T? {
        for line in seen {
            if let found = extract(line) { return found }
        }
        while let line = await nextLine() {
            if let found = extract(line) { return found }
        }
        return nil
    }

    /// The port the server listens on, from Hummingbird's "Server started and listening on 127.0.0.1:PORT".
    func port() async -> Int? {
        await find { line in
            guard let range = line.range(of: "Server started and listening on ") else { return nil }
            return Int(line[range.upperBound...].split(separator: ":").last?.prefix { $0.isNumber } ?? "")
        }
    }

    /// Sends `signal` and reads the output to its end, which comes when the process has ended.
    func stop(_ signal: Subprocess.Signal) async {
        do {
            try self.signal(signal)
        } catch {
            Issue.record("Could not send \(signal.rawValue) to kizuna: \(error)")
        }
        await readToEnd()
    }

    private func readToEnd() async {
        while await nextLine() != nil {}
    }

    private func nextLine() async -> String? {
        guard !ended else { return nil }
        do {
            if let line = try await lines.next() {
                seen.append(line)
                return line
            }
        } catch {
            Issue.record("Reading kizuna's output failed: \(error)")
        }
        ended = true
        return nil
    }

    /// An executable of the package, built beside this test bundle.
    private static func binary(_ name: String) throws -> FilePath {
        let path = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name).path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw CocoaError(
                .fileNoSuchFile,
                userInfo: [NSFilePathErrorKey: path, NSLocalizedDescriptionKey: "build the \(name) executable first (swift build)"])
        }
        return FilePath(path)
    }
}
