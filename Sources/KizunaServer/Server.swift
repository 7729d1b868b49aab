import Hummingbird
import Logging
import NIOCore
import NIOPosix

/// Runs the Kizuna server until SIGINT or SIGTERM, then drains requests and closes the store: what `kizuna serve`
/// does once it has read its flags.
///
/// The server's tasks run on NIO's event loops: a request's handler runs on the thread that owns its connection, from
/// its first middleware to its answer, instead of hopping to the global pool and back. `kizuna serve` makes the loops
/// the process's global executor first (``EventLoopGlobalExecutor``); otherwise (a host process embedding this), every
/// task of the server prefers them as its executor (``EventLoopTaskExecutor``). The loops are as many as the CPUs the
/// process may run on. Before building the server it raises the open-file limit to its hard limit, lowering
/// `maxConnections` when even that allows fewer connections.
/// - Parameter configuration: What to serve and where the store lives.
/// - Throws: `store_too_new`, `unavailable` when another server holds the SQLite store, or an error opening it.
public func runServer(configuration: KizunaConfiguration) async throws {
    let logger = Logger(label: "kizuna")
    CPUAffinity.sizeEventLoops()
    var configuration = configuration
    if let descriptors = OpenFileLimit.raise() {
        let cap = OpenFileLimit.connectionCap(configuration.maxConnections, limit: descriptors)
        if cap < configuration.maxConnections {
            logger.warning(
                "The open-file limit allows fewer connections than asked; raise it (ulimit -n) for more",
                metadata: ["openFileLimit": "\(descriptors)", "maxConnections": "\(cap)"])
            configuration.maxConnections = cap
        }
    }
    let app = try await buildApplication(configuration: configuration)
    if EventLoopGlobalExecutor.isInstalled {
        try await app.runService()
    } else if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, visionOS 2, *) {
        try await withTaskExecutorPreference(EventLoopTaskExecutor(group: NIOSingletons.posixEventLoopGroup)) {
            try await app.runService()
        }
    } else {
        try await app.runService()
    }
}
