import Foundation
import KizunaCore

/// A config version that reached the device over the realtime stream.
public struct RemoteConfigUpdate: Sendable, Hashable {
    /// The fetched template version.
    public var version: Int64
    /// The keys whose value differs from the active one (added, changed or removed).
    public var changedKeys: Set<String>
    /// Whether the update was activated already (``RemoteConfig/updates(activate:)`` with `activate: true`).
    public var activated: Bool
}

extension RemoteConfig {
    /// New config versions as they are published, for as long as this is iterated.
    ///
    /// Each published version is fetched at once (telling the server the version, so a lagging instance cannot
    /// answer with older values) and then yielded. With `activate: false` (the default) the values wait for
    /// ``activate()``, so the app chooses the moment they take effect; with `true` they are active when yielded.
    /// A connection that drops is resumed where it left off.
    ///
    /// ```swift
    /// for try await update in config.updates() where update.changedKeys.contains("banner") {
    ///     try await config.activate()
    /// }
    /// ```
    public func updates(activate: Bool = false) -> RemoteConfigUpdates {
        RemoteConfigUpdates(config: self, activate: activate)
    }

    /// Fetches `version` (or newer) and describes what differs from the active values.
    func update(to version: Int64, activate: Bool) async throws(KizunaError) -> RemoteConfigUpdate? {
        guard (fetchedVersion ?? 0) < version else { return nil }
        while true {
            do {
                guard case .fetched(let fetched) = try await fetchFromServer(knownVersion: version) else { return nil }
                let changed = state.withLock { stored in
                    let old = stored.active?.values ?? [:]
                    let new = stored.fetched?.values ?? [:]
                    return Set(old.keys).union(new.keys).filter { old[$0] != new[$0] }
                }
                if activate { try await self.activate() }
                return RemoteConfigUpdate(version: fetched, changedKeys: changed, activated: activate)
            } catch  where error.code == .throttled {
                // The server says when: wait that long, then fetch the announced version.
                do {
                    try await Task.sleep(for: .seconds(error.retryAfter ?? 60))
                } catch {
                    throw KizunaError(.transport, "Cancelled while waiting out throttling.")
                }
            }
        }
    }
}

/// The sequence behind ``RemoteConfig/updates(activate:)``.
public struct RemoteConfigUpdates: AsyncSequence, Sendable {
    public typealias Element = RemoteConfigUpdate

    let config: RemoteConfig
    let activate: Bool

    public func makeAsyncIterator() -> Iterator {
        Iterator(config: config, activate: activate, events: config.app.events().makeAsyncIterator())
    }

    /// Iterates ``RemoteConfigUpdates``.
    public struct Iterator: AsyncIteratorProtocol {
        let config: RemoteConfig
        let activate: Bool
        var events: AppEvents.Iterator

        public mutating func next() async throws -> RemoteConfigUpdate? {
            while let event = try await events.next() {
                let version: Int64
                switch event {
                case .snapshot(let config, _): version = config
                case .config(let published): version = published
                case .gate: continue
                }
                do {
                    if let update = try await config.update(to: version, activate: activate) { return update }
                } catch  where !AppEvents.Iterator.isFatal(error) {
                    // A failed fetch leaves the old values; the next event or reconnect snapshot tries again.
                    continue
                }
            }
            return nil
        }
    }
}
