import Hummingbird
import KizunaServer

// The ```swift blocks of KizunaServer.docc/GettingStarted.md, copied verbatim (KizunaSnippetTests' SnippetSyncTests
// keeps them so) so that they compile with the server library as it is. The functions are never called.

// snippet: Sources/KizunaServer/KizunaServer.docc/GettingStarted.md#1
private func serverRun() async throws {
    let configuration = KizunaConfiguration(port: 8080, database: .sqlite(dataDirectory: "./kizuna-data"))
    try await runServer(configuration: configuration)  // SIGINT and SIGTERM drain requests, then close the store
}

// snippet: Sources/KizunaServer/KizunaServer.docc/GettingStarted.md#2
private func serverRunYourself() async throws {
    let configuration = KizunaConfiguration(port: 8080, database: .sqlite(dataDirectory: "./kizuna-data"))
    let app = try await buildApplication(configuration: configuration)
    try await app.runService()  // SIGINT and SIGTERM drain requests, then close the store
}
