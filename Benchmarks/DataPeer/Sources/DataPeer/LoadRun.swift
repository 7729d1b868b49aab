/// Runs one operation from `concurrency` tasks at once, each starting its next as soon as its last finishes (as
/// wrk's connections do), until `seconds` pass or `count` operations are done, and times each.
struct LoadRun: Sendable {
    var concurrency: Int
    var seconds: Double
    /// Operations in all; `nil` to run for `seconds`.
    var count: Int?

    /// What a run did.
    struct Report: Sendable {
        var operations = 0
        var failures = 0
        var firstFailure: String?
        var elapsed = Duration.zero
        /// Every operation's time, sorted.
        var latencies: [Duration] = []

        var perSecond: Double { Double(operations) / max(elapsed.inSeconds, 1e-9) }

        /// The `fraction` quantile of the operations' times, in milliseconds.
        func milliseconds(at fraction: Double) -> Double {
            guard !latencies.isEmpty else { return 0 }
            let index = min(latencies.count - 1, Int((Double(latencies.count) * fraction).rounded(.up)) - 1)
            return latencies[max(0, index)].inSeconds * 1000
        }
    }

    /// Runs `operation(task, n)` (`n` counts that task's operations from 0). A task stops at its first failure: the
    /// report counts it and the run goes on with the others.
    func run(_ operation: @escaping @Sendable (_ task: Int, _ n: Int) async throws -> Void) async -> Report {
        let clock = ContinuousClock()
        let start = clock.now
        let deadline = start + .milliseconds(Int64(seconds * 1000))  // unless a count is given
        let concurrency = concurrency, count = count
        var report = await withTaskGroup(of: Report.self) { group in
            for task in 0..<concurrency {
                let quota = count.map { $0 / concurrency + (task < $0 % concurrency ? 1 : 0) }
                group.addTask {
                    var mine = Report()
                    var n = 0
                    while true {
                        if let quota {
                            if n >= quota { break }
                        } else if clock.now >= deadline {
                            break
                        }
                        let began = clock.now
                        do {
                            try await operation(task, n)
                        } catch {
                            mine.failures += 1
                            mine.firstFailure = String(describing: error)
                            break
                        }
                        mine.latencies.append(clock.now - began)
                        mine.operations += 1
                        n += 1
                    }
                    return mine
                }
            }
            var all = Report()
            for await part in group {
                all.operations += part.operations
                all.failures += part.failures
                all.firstFailure = all.firstFailure ?? part.firstFailure
                all.latencies += part.latencies
            }
            return all
        }
        report.elapsed = clock.now - start
        report.latencies.sort()
        return report
    }
}

extension Duration {
    /// The duration in seconds.
    var inSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
