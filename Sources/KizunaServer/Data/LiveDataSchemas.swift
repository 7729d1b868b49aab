import Foundation
import KizunaCore
import Synchronization

/// Each app's data API at its live schema version, built once and kept until the change feed reports a schema
/// publish (from any instance), so a new schema takes effect everywhere without a restart.
final class LiveDataSchemas: Sendable {
    private struct Slot {
        var generation: UInt64 = 0
        var runtime: DataRuntime?
    }

    private let documents: any DocumentRepository
    private let database: KizunaDatabase
    private let secrets: ServerSecrets
    private let slots = Mutex<[String: Slot]>([:])

    init(documents: any DocumentRepository, database: KizunaDatabase, secrets: ServerSecrets, feed: ChangeFeed) {
        self.documents = documents
        self.database = database
        self.secrets = secrets
        feed.observe { [weak self] change in
            guard change.kind == DocumentKind.schema.rawValue || change.kind == "app" else { return }
            self?.invalidate(change.entityId)
        }
    }

    /// Drops the app's API; the publishing instance calls it at once, the others when their feed delivers.
    func invalidate(_ app: String) {
        slots.withLock { slots in
            slots[app] = Slot(generation: (slots[app]?.generation ?? 0) &+ 1)
        }
    }

    /// The app's data API at its live schema version.
    func runtime(_ app: String) async throws -> DataRuntime {
        let slot = slots.withLock { $0[app] ?? Slot() }
        if let runtime = slot.runtime { return runtime }
        let live = try await documents.current(app: app, kind: .schema)
        let data = try DataSchema(sdl: try SchemaDocument.sdl(in: live.document))
        let runtime = DataRuntime(
            app: app, version: live.version, data: data, database: database, cursorKey: try await secrets.key("page-cursor"))
        slots.withLock { slots in
            // A publish that arrived while this loaded may not be in it: keep the result only if none did.
            if (slots[app]?.generation ?? 0) == slot.generation { slots[app, default: Slot()].runtime = runtime }
        }
        return runtime
    }
}
