import Foundation
import KizunaCore

/// What the device endpoints need about one app — its record, live template and live policy — each read when
/// first asked for and kept until the change feed reports that the app or one of its documents changed.
///
/// Every instance's feed sees every change, so a publish on one instance reaches the others' caches as fast as
/// it reaches their streams. A device that knows of a newer version than the cache holds (it heard the event
/// from another instance) asks for it and the cache reloads. A gate check that misses the cache reads the app and
/// the policy, never the config template (often the largest document), and the other way round.
final class LiveDocuments: Sendable {
    /// A published document, parsed, with its version and the device answers already encoded from it.
    struct Live<Value: Sendable, Key: Hashable & Sendable>: Sendable {
        let app: AppRecord
        let version: Int64
        let value: Value
        let answers: AnswerMemo<Key>
    }

    /// What a gate answer depends on besides the policy: the decision, the install when it is one of the policy's
    /// maintenance testers (it sees its own id in the policy), and the app's store URL.
    struct GateAnswerKey: Hashable, Sendable {
        let decision: UpdateDecision
        let tester: String?
        let storeURL: String?
    }

    private struct Parsed<Value: Sendable, Key: Hashable & Sendable>: Sendable {
        let version: Int64
        let value: Value
        let answers = AnswerMemo<Key>()
    }

    private let apps: any AppRepository
    private let documents: any DocumentRepository
    // Separate caches, so a gate publish leaves the cached template alone; an app change empties all three.
    private let records: FeedCache<AppRecord>
    private let templates: FeedCache<Parsed<RemoteConfigTemplate, ConditionOutcomes>>
    private let policies: FeedCache<Parsed<GatePolicy, GateAnswerKey>>

    init(apps: any AppRepository, documents: any DocumentRepository, feed: ChangeFeed) {
        self.apps = apps
        self.documents = documents
        records = FeedCache(feed: feed, kinds: ["app"])
        templates = FeedCache(feed: feed, kinds: ["app", DocumentKind.config.rawValue])
        policies = FeedCache(feed: feed, kinds: ["app", DocumentKind.gate.rawValue])
    }

    /// Forgets what is cached for `app`: the publishing instance calls it at once, the others' feeds follow.
    func invalidate(_ app: String) {
        records.invalidate(app)
        templates.invalidate(app)
        policies.invalidate(app)
    }

    /// The live config template of `app`, reloaded when the cached one is older than `atLeast`.
    nonisolated(nonsending) func config(_ app: String, atLeast: Int64? = nil) async throws -> Live<RemoteConfigTemplate, ConditionOutcomes> {
        try await live(app, templates, kind: .config, atLeast: atLeast, parse: RemoteConfigTemplate.init(parsing:))
    }

    /// The live gate policy of `app`, reloaded when the cached one is older than `atLeast`.
    nonisolated(nonsending) func gate(_ app: String, atLeast: Int64? = nil) async throws -> Live<GatePolicy, GateAnswerKey> {
        try await live(app, policies, kind: .gate, atLeast: atLeast, parse: GatePolicy.init(parsing:))
    }

    /// The live config template of `app` when it is cached and at least `atLeast`; nil when it would have to be read.
    func cachedConfig(_ app: String, atLeast: Int64? = nil) -> Live<RemoteConfigTemplate, ConditionOutcomes>? {
        cached(app, templates, atLeast: atLeast)
    }

    /// The live gate policy of `app` when it is cached and at least `atLeast`; nil when it would have to be read.
    func cachedGate(_ app: String, atLeast: Int64? = nil) -> Live<GatePolicy, GateAnswerKey>? {
        cached(app, policies, atLeast: atLeast)
    }

    /// The live versions of both documents, for a stream's opening snapshot.
    ///
    /// - Throws: `not_found` for an unknown app.
    func versions(_ app: String) async throws -> (config: Int64, gate: Int64) {
        async let config = config(app)
        async let gate = gate(app)
        return try await (config.version, gate.version)
    }

    private func cached<Value: Sendable, Key: Hashable & Sendable>(
        _ app: String, _ cache: FeedCache<Parsed<Value, Key>>, atLeast: Int64?
    ) -> Live<Value, Key>? {
        guard let record = records.cached(app), let parsed = cache.cached(app, isFresh: { $0.version >= atLeast ?? 0 }) else { return nil }
        return Live(app: record, version: parsed.version, value: parsed.value, answers: parsed.answers)
    }

    private nonisolated(nonsending) func live<Value: Sendable, Key: Hashable & Sendable>(
        _ app: String,
        _ cache: FeedCache<Parsed<Value, Key>>,
        kind: DocumentKind,
        atLeast: Int64?,
        parse: @escaping (JSONValue) throws -> Value
    ) async throws -> Live<Value, Key> {
        let record = try await records.value(app) {
            guard let found = try await apps.find(id: app) else { throw KizunaError.noSuchApp(app) }
            return found
        }
        let parsed = try await cache.value(app, isFresh: { $0.version >= atLeast ?? 0 }) {
            let document = try await documents.current(app: app, kind: kind)
            return Parsed(version: document.version, value: try parse(document.document))
        }
        return Live(app: record, version: parsed.version, value: parsed.value, answers: parsed.answers)
    }
}
