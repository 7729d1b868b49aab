import Foundation
import Synchronization

/// Connects the admin client's transfer reports to a ``TransferProgress``, made at the first report (which carries
/// the total); a transfer that resumes says how much was already there before the progress starts.
final class TransferMeter: Sendable {
    let verb: TransferProgress.Verb
    let label: String
    private let progress = Mutex<TransferProgress?>(nil)

    init(verb: TransferProgress.Verb, label: String) {
        self.verb = verb
        self.label = label
    }

    /// For the client's `progress:` parameter: the bytes done and the total.
    var report: @Sendable (Int64, Int64) -> Void {
        { [self] done, total in
            let shown = progress.withLock { progress in
                if let progress { return progress }
                if done > 0 {
                    TransferProgress.writeToStandardError("\(verb.rawValue): \(label): resuming: \(done) bytes already there\n")
                }
                let made = TransferProgress(label: label, total: total, verb: verb)
                progress = made
                return made
            }
            shown.advance(to: done)
        }
    }

    func finish() { progress.withLock { $0 }?.finish() }
    func fail() { progress.withLock { $0 }?.fail() }
}
