import Foundation
import KizunaCore

/// Each app's data API at its live schema version, built once and kept until the change feed reports a schema
/// publish or an app change (from any instance), so a new schema takes effect everywhere without a restart.
final class LiveDataSchemas: Sendable {
    private let apps: any AppRepository
    private let documents: any DocumentRepository
    private let database: KizunaDatabase
    private let secrets: ServerSecrets
    private let runtimes: FeedCache<DataRuntime>
    private let feed: ChangeFeed
    private let tombstoneRetention: Int64

    init(
        apps: any AppRepository, documents: any DocumentRepository, database: KizunaDatabase, secrets: ServerSecrets, feed: ChangeFeed,
        tombstoneRetention: Int64 = DataRuntime.defaultTombstoneRetention
    ) {
        self.apps = apps
        self.documents = documents
        self.database = database
        self.secrets = secrets
        self.feed = feed
        self.tombstoneRetention = tombstoneRetention
        runtimes = FeedCache(feed: feed, kinds: ["app", DocumentKind.schema.rawValue])
    }

    /// Drops the app's API; the publishing instance calls it at once, the others when their feed delivers.
    func invalidate(_ app: String) {
        runtimes.invalidate(app)
    }

    /// The app's data API at its live schema version. The app is looked up only when nothing is cached, so a request
    /// costs no store read; an unknown app is never cached (a stream of made-up ids cannot grow the cache).
    /// - Throws: `not_found` for an unknown app.
    func runtime(_ app: String) async throws -> DataRuntime {
        try await runtimes.value(app) {
            guard try await apps.find(id: app) != nil else { throw KizunaError.noSuchApp(app) }
            let live = try await documents.current(app: app, kind: .schema)
            let data = try DataSchema(sdl: try SchemaDocument.sdl(in: live.document))
            return DataRuntime(
                app: app, version: live.version, data: data, database: database, cursorKey: try await secrets.key("page-cursor"),
                tombstoneRetention: tombstoneRetention, didCommit: feed.poke)
        }
    }
}
