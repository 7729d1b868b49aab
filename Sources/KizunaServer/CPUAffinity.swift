import Foundation
import NIOCore
import NIOPosix

/// The CPUs this process may run on, which `taskset` and container CPU sets narrow: Linux's `Cpus_allowed` mask in
/// `/proc/self/status` (Glibc's module does not export `sched_getaffinity`).
enum CPUAffinity {
    /// How many; `nil` where the system does not say (macOS).
    static func count(status path: String = "/proc/self/status") -> Int? {
        guard let status = try? String(contentsOfFile: path, encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed:") })
        else { return nil }
        let mask = line.dropFirst("Cpus_allowed:".count).filter { $0.isHexDigit }
        let count = mask.reduce(0) { $0 + (Int(String($1), radix: 16) ?? 0).nonzeroBitCount }
        return count > 0 ? count : nil
    }

    /// Sizes NIO's singleton event loops (and its blocking pool) to the CPUs this process may run on, once and before
    /// they exist: NIO counts the machine's (or the cgroup's), so a server pinned to one core of two (taskset) ran two
    /// loops taking turns on it, each hop between them a context switch.
    static func sizeEventLoops() {
        _ = sized
    }

    private static let sized: Void = {
        if let allowed = count(), allowed < System.coreCount {
            NIOSingletons.groupLoopCountSuggestion = allowed
            NIOSingletons.blockingPoolThreadCountSuggestion = max(allowed, 2)
        }
    }()
}
