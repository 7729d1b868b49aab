import Foundation
import Synchronization
import Testing

/// The `kizuna` binary running in a child process (a server, typically), its standard output and error read as
/// lines while it runs, stopped with whatever signal the test sends, and killed if the test ends without stopping it.
final class ServeProcess {
    let process: Process
    private var lines: AsyncStream<String>.Iterator
    private let exited: AsyncStream<Void>
    /// Every line read so far.
    private(set) var seen: [String] = []

    /// Starts `kizuna <arguments>`.
    init(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = try MigrationKillTests.binary()
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        let (stream, continuation) = AsyncStream.makeStream(of: String.self)
        let pending = Mutex("")
        output.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            guard !data.isEmpty else {
                handle.readabilityHandler = nil
                continuation.finish()
                return
            }
            let complete: [String] = pending.withLock { buffer in
                buffer += String(decoding: data, as: UTF8.self)
                var parts = buffer.components(separatedBy: "\n")
                buffer = parts.removeLast()
                return parts
            }
            for line in complete { continuation.yield(line) }
        }
        let (exited, exit) = AsyncStream.makeStream(of: Void.self)
        process.terminationHandler = { _ in
            exit.yield()
            exit.finish()
        }
        try process.run()
        self.process = process
        self.exited = exited
        lines = stream.makeAsyncIterator()
    }

    /// The first value `extract` finds in the lines seen so far or read next; `nil` when the output ends first.
    func find<T>(_ extract: (String) -> T?) async -> T? {
        for line in seen {
            if let found = extract(line) { return found }
        }
        while let line = await lines.next() {
            seen.append(line)
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

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    /// Sends `signal` and waits until the process has ended; answers whether a signal ended it.
    @discardableResult
    func stop(_ signal: Int32) async -> Bool {
        kill(process.processIdentifier, signal)
        return await ended().signaled
    }

    /// Waits until the process has ended; answers its status and whether a signal ended it.
    func ended() async -> (status: Int32, signaled: Bool) {
        for await _ in exited {}
        return (process.terminationStatus, process.terminationReason == .uncaughtSignal)
    }
}
