import Foundation
import Synchronization

/// What `release upload` and `release download` show while bytes move: the first report says where the transfer
/// starts (a resumed one says so).
final class TransferMeter: Sendable {
    let verb: String
    let label: String
    let json: Bool
    private let started = Mutex(false)

    init(verb: String, label: String, json: Bool) {
        self.verb = verb
        self.label = label
        self.json = json
    }

    var report: @Sendable (Int64, Int64) -> Void {
        { [self] done, total in
            let first = started.withLock { started in
                defer { started = true }
                return !started
            }
            guard first else { return }
            let resumed = done > 0 ? " (resuming: \(done) bytes already there)" : ""
            ReleaseCommand.progress("\(verb): \(label) \(total) bytes …\(resumed)", json: json)
        }
    }

    func finish() {}
    func fail() {}
}
