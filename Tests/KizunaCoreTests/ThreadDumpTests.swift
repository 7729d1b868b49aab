import Testing

@testable import KizunaTestSupport

/// The summary line of a thread dump names the threads doing something, not the parked ones.
@Suite("Thread dumps")
struct ThreadDumpTests {
    @Test func onlyThreadsThatAreNotParkedAreNamed() {
        let stacks = """
            [New LWP 12]

            Thread 3 (Thread 0x7f01 (LWP 12) "NIO-SGLTN-0-#1"):
            #0  0x00007f in sqlite3_step () from /lib/libsqlite3.so
            #1  0x00007f in $s9SQLiteNIO16SQLiteConnectionC5query ()

            Thread 2 (Thread 0x7f02 (LWP 11) "NIO-SGLTN-0-#0"):
            #0  0x00007f in epoll_wait () from /lib/libc.so.6
            #1  0x00007f in $s8NIOPosix5EpollO10epoll_wait ()

            Thread 1 (Thread 0x7f03 (LWP 10) "TP-#0"):
            #0  __futex_abstimed_wait_common64 (private=0) at futex-internal.c:57
            #1  ___pthread_cond_wait (cond=0x1) at pthread_cond_wait.c:618
            """
        #expect(ThreadDump.busyThreads(in: stacks) == ["NIO-SGLTN-0-#1: #0  0x00007f in sqlite3_step () from /lib/libsqlite3.so"])
    }
}
