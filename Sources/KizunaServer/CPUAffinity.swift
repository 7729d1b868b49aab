import Foundation

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
}
