import Subprocess

/// Runs the outside clients' Python scripts (`Tests/Contract`) as child processes.
enum Python {
    /// Runs `python3 <arguments>` to its end, with standard error merged into standard output; answers its exit status
    /// (128 + the signal's number when a signal ended it) and everything it printed.
    ///
    /// swift-subprocess starts it and awaits its end through a pidfd; Foundation's `Process` crashed the suite on Linux
    /// with many descriptors open (see `ServeProcess` in kizunaTests). A run longer than `limit` is killed and fails.
    static func run(_ arguments: [String], limit: Duration = .seconds(900)) async throws -> (status: Int32, output: String) {
        let result = try await withThrowingTaskGroup(of: ExecutionResult<Void, StringOutput<UTF8>, CombinedErrorOutput>?.self) { group in
            group.addTask {
                try await Subprocess.run(
                    .name("python3"), arguments: Arguments(arguments), output: .string(limit: 64 << 20), error: .combinedWithOutput)
            }
            group.addTask {
                try await Task.sleep(for: limit)
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
        guard let result else { throw TimedOut(arguments: arguments, limit: limit) }
        let status: Int32 =
            switch result.terminationStatus {
            case .exited(let code): code
            case .signaled(let number): 128 + number
            }
        return (status, result.standardOutput)
    }

    struct TimedOut: Error, CustomStringConvertible {
        let arguments: [String]
        let limit: Duration
        var description: String { "python3 \(arguments.joined(separator: " ")) ran past \(limit) and was killed" }
    }
}
