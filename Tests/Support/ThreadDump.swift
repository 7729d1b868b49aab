import Foundation

/// Every thread's stack of the test process, written to a file that outlives the run, for a wait that should have
/// ended and did not: a server that never started listening, say. A test's time limit only says that it waited, and
/// CI prints the end of its log alone; the stacks say what the process was doing (a blocked event loop, a lock).
public enum ThreadDump {
    /// Where the dumps go (`KIZUNA_TEST_DIAGNOSTICS`, or `/var/tmp/kizuna-test-diagnostics`), outside the clone CI
    /// deletes.
    public static var directory: URL {
        URL(fileURLWithPath: ProcessInfo.processInfo.environment["KIZUNA_TEST_DIAGNOSTICS"] ?? "/var/tmp/kizuna-test-diagnostics")
    }

    /// Writes the stacks (with gdb, when installed) and says where, with the threads that were not parked, in one
    /// line on standard error; returns that line.
    @discardableResult
    public static func write(reason: String) -> String {
        let stamp = ISO8601DateFormatter().string(from: Date()).replacingOccurrences(of: ":", with: "")
        let file = directory.appendingPathComponent("stacks-\(stamp)-\(ProcessInfo.processInfo.processIdentifier).txt")
        var line = "Thread dump (\(reason)): "
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let stacks = try gdb()
            try Data("\(reason)\n\n\(stacks)".utf8).write(to: file)
            line += "\(file.path); busy: \(busyThreads(in: stacks).joined(separator: "; "))"
        } catch {
            line += "not written: \(error)"
        }
        FileHandle.standardError.write(Data((line + "\n").utf8))
        return line
    }

    /// gdb's `thread apply all bt` of this process.
    private static func gdb() throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["gdb", "-p", String(ProcessInfo.processInfo.processIdentifier), "-batch", "-ex", "thread apply all bt 40"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0, !data.isEmpty else { throw CocoaError(.executableLoad) }
        return String(decoding: data, as: UTF8.self)
    }

    /// Each thread whose innermost frames are not a park (a condition, a futex, epoll, a semaphore or a read): its name and
    /// first frame of its own.
    static func busyThreads(in stacks: String) -> [String] {
        let parked = ["pthread_cond_wait", "futex", "epoll_wait", "epoll_pwait", "sem_wait", "sigsuspend", "__select", "__ppoll", "libc_read"]
        return stacks.components(separatedBy: "\nThread ").dropFirst().compactMap { thread -> String? in
            let lines = thread.split(separator: "\n")
            let frames = lines.dropFirst().filter { $0.hasPrefix("#") }
            if frames.prefix(3).contains(where: { frame in parked.contains { frame.contains($0) } }) { return nil }
            let name = lines.first.flatMap { $0.split(separator: "\"").dropFirst().first }.map(String.init) ?? "?"
            let top = frames.first.map { String($0.prefix(160)) } ?? "?"
            return "\(name): \(top)"
        }
    }
}

/// The first element of `stream`, or nil when the stream ends or none arrives within `limit`; then, unless the
/// waiting task was cancelled, every thread's stack is written (``ThreadDump``) naming `what` was awaited.
public func firstElement<T: Sendable>(of stream: AsyncStream<T>, within limit: Duration, waitingFor what: String) async -> T? {
    let outcome: T?? = await withTaskGroup(of: T??.self) { group in
        group.addTask {
            var iterator = stream.makeAsyncIterator()
            return .some(await iterator.next())
        }
        group.addTask {
            try? await Task.sleep(for: limit)
            return .none
        }
        let first = await group.next() ?? .none
        group.cancelAll()
        return first
    }
    guard let outcome else {
        if !Task.isCancelled { ThreadDump.write(reason: "no \(what) within \(limit)") }
        return nil
    }
    return outcome
}
