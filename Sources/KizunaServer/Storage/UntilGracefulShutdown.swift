import ServiceLifecycle

/// Runs `work` in a task of its own and waits for it — or, once the server starts shutting down, for nothing: the
/// work is cancelled and left to end by itself, and `nil` comes back at once.
///
/// For a service's store work: a wait inside a database driver may ignore cancellation (a connection whose peer went
/// silent mid-handshake, through a proxy cut while a database restarted), and a service blocked on it would hold the
/// whole server's shutdown, as two outage tests once showed (the change feed and the push sender, each in a store
/// call that outlived the store's return).
func untilGracefulShutdown<T: Sendable>(_ work: @escaping @Sendable () async -> T) async -> T? {
    let (result, deliver) = AsyncStream.makeStream(of: T.self, bufferingPolicy: .bufferingNewest(1))
    let task = Task {
        deliver.yield(await work())
        deliver.finish()
    }
    for await value in result.cancelOnGracefulShutdown() { return value }
    task.cancel()
    return nil
}
