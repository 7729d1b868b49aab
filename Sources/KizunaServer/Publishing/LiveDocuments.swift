import Foundation
import KizunaCore
import Synchronization

/// What the device endpoints need about one app — its record, live template and live policy — read once and
/// kept until the change feed reports that one of them changed.
///
/// Every instance's feed sees every change, so a publish on one instance reaches the others' caches as fast as
/// it reaches their streams. A device that knows of a newer version than the cache holds (it heard the event
/// from another instance) asks for it and the cache reloads.
final class LiveDocuments: Sendable {
    struct Entry: Sendable {
        let app: AppRecord
        let configVersion: Int64
        let template: RemoteConfigTemplate
        let gateVersion: Int64
        let policy: GatePolicy
    }

    private struct Slot {
        var generation: UInt64 = 0
        var entry: Entry?
    }

    private let apps: any AppRepository
    private let documents: any DocumentRepository
    private let slots = Mutex<[String: Slot]>([:])

    init(apps: any AppRepository, documents: any DocumentRepository, feed: ChangeFeed) {
        self.apps = apps
        self.documents = documents
        feed.observe { [weak self] change in
            guard ["app", DocumentKind.config.rawValue, DocumentKind.gate.rawValue].contains(change.kind) else { return }
            self?.invalidate(change.entityId)
        }
    }

    func invalidate(_ app: String) {
        slots.withLock { slots in
            slots[app, default: Slot()].generation &+= 1
            slots[app]?.entry = nil
        }
    }

    /// The entry for `app`, reloaded when the cached one is older than `atLeast` for that kind.
    func entry(_ app: String, atLeast: (kind: DocumentKind, version: Int64)? = nil) async throws -> Entry {
        let (cached, generation) = slots.withLock { ($0[app]?.entry, $0[app]?.generation ?? 0) }
        if let cached, !Self.isOlder(cached, than: atLeast) { return cached }
        guard let record = try await apps.find(id: app) else {
            throw KizunaError(.notFound, "There is no app with id '\(app)'.", field: "app")
        }
        async let config = documents.current(app: app, kind: .config)
        async let gate = documents.current(app: app, kind: .gate)
        let (template, policy) = try await (config, gate)
        let entry = Entry(
            app: record,
            configVersion: template.version,
            template: try RemoteConfigTemplate(parsing: template.document),
            gateVersion: policy.version,
            policy: try GatePolicy(parsing: policy.document)
        )
        slots.withLock { slots in
            // A change that arrived while this load ran may not be in it: keep the result only if none did.
            if (slots[app]?.generation ?? 0) == generation { slots[app, default: Slot()].entry = entry }
        }
        return entry
    }

    private static func isOlder(_ entry: Entry, than wanted: (kind: DocumentKind, version: Int64)?) -> Bool {
        guard let wanted else { return false }
        switch wanted.kind {
        case .config: return entry.configVersion < wanted.version
        case .gate: return entry.gateVersion < wanted.version
        }
    }
}
