import Foundation

/// A value guarded by a lock, so the SDK's objects can answer reads synchronously from any thread.
///
/// Critical sections only touch memory; file writes and network calls happen outside them.
///
/// `@unchecked` because the compiler cannot see that `lock` guards `value`: every access goes through
/// ``withLock(_:)``. (`Synchronization.Mutex` would say so itself, but it needs iOS 18 and the SDK supports iOS 17.)
final class Locked<Value>: @unchecked Sendable {
    private var value: Value
    private let lock = NSLock()

    init(_ value: Value) { self.value = value }

    func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
