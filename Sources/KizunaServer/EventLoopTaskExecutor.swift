import NIOCore
import NIOPosix

/// A task executor that runs jobs on NIO's event loops: on the loop of the thread that enqueues the job when there
/// is one (a request's task resumes on the thread that owns its connection), otherwise on the group's next loop.
///
/// `runServer` makes every task of the server prefer it (`withTaskExecutorPreference`, inherited by each
/// connection's child task and each service's) when the loops are not already the global executor: in a host process
/// that embeds the server. `kizuna serve` installs ``EventLoopGlobalExecutor`` instead, which saves the runtime reading
/// the preference under the task's lock at every switch. NIO's own global-executor takeover, used before, runs every job "on"
/// its event loop as a *serial* executor, so each call into a nonisolated `async` function — each of Hummingbird's
/// middleware, the router, a route's handler — left that executor and was enqueued again: 35 jobs for one
/// `GET /health/live`, 55 for one `config:fetch`. Under a task executor those calls run on in place, and a task is
/// enqueued only when it really waits (the next request, a store read): under one job per request.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *)
final class EventLoopTaskExecutor: TaskExecutor {
    private let group: any EventLoopGroup

    init(group: any EventLoopGroup) {
        self.group = group
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let loop = MultiThreadedEventLoopGroup.currentEventLoop ?? group.next()
        loop.execute {
            job.runSynchronously(on: self.asUnownedTaskExecutor())
        }
    }
}
