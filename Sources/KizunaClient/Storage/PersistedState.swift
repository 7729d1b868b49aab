import Foundation
import KizunaCore

/// State held in memory, so reads are synchronous, and mirrored to one file of the app's directory, so it
/// survives the app being killed.
///
/// Mutate under ``withLock(_:)``, then ``persist()``. Writes are serialised and each writes the state as it is
/// then, so the file always ends up holding the newest state.
final class PersistedState<Value: Codable & Sendable>: Sendable {
    private let files: FileStore
    private let name: String
    private let format: Int
    private let state: Locked<Value>
    private let writes = NSLock()

    /// Loads `name` (written with `format`), or starts from `initial` when it is absent or unreadable.
    init(files: FileStore, name: String, format: Int, initial: Value) {
        self.files = files
        self.name = name
        self.format = format
        state = Locked(files.read(Value.self, from: name, format: format) ?? initial)
    }

    func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        try state.withLock(body)
    }

    /// Writes the current state. - Throws: `internal_error` naming the file.
    func persist() throws(KizunaError) {
        writes.lock()
        defer { writes.unlock() }
        try files.write(state.withLock { $0 }, to: name, format: format)
    }
}
