import Atomics
import NIOCore
import NIOPosix

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// NIO's event loops as Swift concurrency's global executor, for `kizuna serve`: every job the global pool would run
/// (every task not on an actor) runs on the event loop of the thread that enqueues it — a request's task resumes on
/// the thread that owns its connection — or on the group's next loop; and it runs there *as the global pool runs it*,
/// on the generic executor, so a call into a nonisolated `async` function finds itself where it should be and runs on.
///
/// Why not the other two ways to the same place:
/// - NIO's own takeover (`NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor`)
///   runs each job on the loop as a *serial* executor, so every call into a nonisolated function leaves it and is
///   enqueued again: 35 jobs for one `GET /health/live`.
/// - ``EventLoopTaskExecutor`` as every task's executor preference (what ``runServer(configuration:)`` does when this
///   is not installed) keeps a task on its loop too, but a preference is a record on the task that the runtime reads
///   under the task's lock at every switch — about forty for one `GET /health/live`, 6 % of its CPU.
///
/// Process-wide, so installed by the executable before the server starts, never by the library on its own (a host
/// process embedding ``runServer(configuration:)`` decides how its tasks run). Unsafe the way NIO's takeover is: the
/// hook's type and the generic executor's representation (null) are the runtime's, not a documented API, hence the
/// compiler bound. Work that blocks a thread must not run in a task, as on any event loop: the store and password
/// hashing have thread pools of their own.
package enum EventLoopGlobalExecutor {
    private static let installed = ManagedAtomic(false)

    /// Whether the event loops run the global executor's jobs.
    package static var isInstalled: Bool { installed.load(ordering: .acquiring) }

    /// Makes the event loops of `NIOSingletons.posixEventLoopGroup` the global executor; false when this runtime has no
    /// hook for it or another executor holds it. Call once, before the server starts.
    @discardableResult
    package static func install() -> Bool {
        #if compiler(<6.4)
            typealias Hook = @convention(thin) (UnownedJob, @convention(thin) (UnownedJob) -> Void) -> Void
            CPUAffinity.sizeEventLoops()  // before a job can make the loops
            // A second call finds the hook taken, by this or another executor, and declines.
            guard let slot = dlsym(dlopen(nil, RTLD_NOW), "swift_task_enqueueGlobal_hook") else { return false }
            let hookSlot = UnsafeAtomic<UnsafeRawPointer?>(at: slot.assumingMemoryBound(to: UnsafeRawPointer?.AtomicRepresentation.self))
            let hook: Hook = { job, _ in
                let loop = MultiThreadedEventLoopGroup.currentEventLoop ?? NIOSingletons.posixEventLoopGroup.next()
                loop.execute { unsafe job.runSynchronously(on: EventLoopGlobalExecutor.generic) }
            }
            let done = withUnsafeTemporaryAllocation(of: Hook.self, capacity: 1) { hookPointer in
                hookPointer.baseAddress!.initialize(to: hook)
                return hookPointer.baseAddress!.withMemoryRebound(to: UnsafeRawPointer.self, capacity: 1) { function in
                    hookSlot.compareExchange(expected: nil, desired: function.pointee, ordering: .acquiringAndReleasing).exchanged
                }
            }
            if done { installed.store(true, ordering: .releasing) }
            return done
        #else
            return false
        #endif
    }

    /// The generic executor — where the global pool runs a job — as the runtime represents it: no identity.
    private static let generic = unsafe unsafeBitCast((UInt(0), UInt(0)), to: UnownedSerialExecutor.self)
}
