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

/// The first of several values offered from anywhere, for one waiter: a race whose losers are ignored rather than
/// cancelled.
final class FirstOf<Value: Sendable>: Sendable {
    private struct State {
        var waiter: CheckedContinuation<Value, Never>?
        var value: Value?
        var decided = false
    }

    private let state = Locked(State())

    /// The first value offered, now or when it comes.
    func wait() async -> Value {
        await withCheckedContinuation { waiter in
            let ready = state.withLock { state -> Value? in
                if let value = state.value { return value }
                state.waiter = waiter
                return nil
            }
            if let ready { waiter.resume(returning: ready) }
        }
    }

    /// Offers a value; only the first counts.
    func offer(_ value: Value) {
        let waiter = state.withLock { state -> CheckedContinuation<Value, Never>? in
            guard !state.decided else { return nil }
            state.decided = true
            state.value = value
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: value)
    }
}
