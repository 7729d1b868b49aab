import Foundation
import KizunaCore
import Synchronization

/// What the device endpoints need about one app — its record, live template and live policy — each read when
/// first asked for and kept until the change feed reports that the app or one of its documents changed.
///
/// Every instance's feed sees every change, so a publish on one instance reaches the others' caches as fast as
/// it reaches their streams. A device that knows of a newer version than the cache holds (it heard the event
/// from another instance) asks for it and the cache reloads. A gate check that misses the cache reads the app and
/// the policy, never the config template (often the largest document), and the other way round.
final class LiveDocuments: Sendable {
    /// A published document, parsed, with its version.
    struct Live<Value: Sendable>: Sendable {
        let app: AppRecord
        let version: Int64
        let value: Value
    }

    private struct Parsed<Value: Sendable>: Sendable {
        let version: Int64
        let value: Value
    }

    private struct Slot {
        var generation: UInt64 = 0
        var app: AppRecord?
        var config: Parsed<RemoteConfigTemplate>?
        var gate: Parsed<GatePolicy>?
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
            let generation = (slots[app]?.generation ?? 0) &+ 1
            slots[app] = Slot(generation: generation)
        }
    }

    /// The live config template of `app`, reloaded when the cached one is older than `atLeast`.
    func config(_ app: String, atLeast: Int64? = nil) async throws -> Live<RemoteConfigTemplate> {
        try await live(app, \.config, kind: .config, atLeast: atLeast, parse: RemoteConfigTemplate.init(parsing:))
    }

    /// The live gate policy of `app`, reloaded when the cached one is older than `atLeast`.
    func gate(_ app: String, atLeast: Int64? = nil) async throws -> Live<GatePolicy> {
        try await live(app, \.gate, kind: .gate, atLeast: atLeast, parse: GatePolicy.init(parsing:))
    }

    /// The live versions of both documents, for a stream's opening snapshot.
    ///
    /// - Throws: `not_found` for an unknown app.
    func versions(_ app: String) async throws -> (config: Int64, gate: Int64) {
        async let config = config(app)
        async let gate = gate(app)
        return try await (config.version, gate.version)
    }

    private func live<Value: Sendable>(
        _ app: String,
        _ part: WritableKeyPath<Slot, Parsed<Value>?>,
        kind: DocumentKind,
        atLeast: Int64?,
        parse: (JSONValue) throws -> Value
    ) async throws -> Live<Value> {
        let slot = slots.withLock { $0[app] ?? Slot() }
        if let record = slot.app, let cached = slot[keyPath: part], cached.version >= atLeast ?? 0 {
            return Live(app: record, version: cached.version, value: cached.value)
        }
        let record: AppRecord
        if let cached = slot.app {
            record = cached
        } else {
            guard let found = try await apps.find(id: app) else { throw KizunaError.noSuchApp(app) }
            record = found
        }
        let document = try await documents.current(app: app, kind: kind)
        let parsed = Parsed(version: document.version, value: try parse(document.document))
        slots.withLock { slots in
            // A change that arrived while this load ran may not be in it: keep the result only if none did.
            guard (slots[app]?.generation ?? 0) == slot.generation else { return }
            slots[app, default: Slot()].app = record
            slots[app, default: Slot()][keyPath: part] = parsed
        }
        return Live(app: record, version: parsed.version, value: parsed.value)
    }
}
