import Foundation
import NIOCore
import NIOPosix
import Testing

@testable import KizunaServer

/// `kizuna serve` runs Swift concurrency's global jobs on NIO's event loops (``EventLoopGlobalExecutor``). That is
/// process-wide, so the check runs in a child process of its own (an exit test); each exit code names what failed.
@Suite("Event loops as the global executor")
struct EventLoopGlobalExecutorTests {
    @Test func tasksRunOnTheEventLoopsOnceInstalled() async {
        await #expect(processExitsWith: .success) {
            func onALoop() -> Bool { MultiThreadedEventLoopGroup.currentEventLoop != nil }
            // Before: the global pool's threads, so what follows does not hold by accident.
            guard await Task.detached(operation: { !onALoop() }).value else { exit(10) }
            guard EventLoopGlobalExecutor.install(), EventLoopGlobalExecutor.isInstalled else { exit(11) }
            guard !EventLoopGlobalExecutor.install() else { exit(12) }  // once only
            // A new task runs on a loop, and so does one resumed from a thread that is no loop's.
            guard await Task.detached(operation: { onALoop() }).value else { exit(13) }
            let resumed = await Task.detached {
                await withCheckedContinuation { continuation in Thread { continuation.resume() }.start() }
                return onALoop()
            }.value
            guard resumed else { exit(14) }
            // A task started on a loop's thread (a connection's) runs on that loop.
            var loops = NIOSingletons.posixEventLoopGroup.makeIterator()
            while let loop = loops.next() {
                let task = try? await loop.submit { Task { MultiThreadedEventLoopGroup.currentEventLoop === loop } }.get()
                guard await task?.value == true else { exit(15) }
            }
            // And after a sleep, which the runtime wakes elsewhere, the next task is on a loop again.
            try? await Task.sleep(for: .milliseconds(1))
            guard await Task.detached(operation: { onALoop() }).value else { exit(16) }
        }
    }
}
