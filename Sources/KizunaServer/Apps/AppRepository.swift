import KizunaCore

/// Stores the apps registry. Every write is checked with ``AppValidation`` before it is stored.
package protocol AppRepository: Sendable {
    /// Registers an app.
    /// - Throws: `validation_failed` listing every problem; `conflict` when the id, or the bundle id on that platform,
    ///   is taken.
    func create(_ app: NewApp) async throws -> AppRecord
    /// Every app, ordered by id.
    func list() async throws -> [AppRecord]
    /// One app, or `nil`.
    func find(id: String) async throws -> AppRecord?
    /// Applies a patch to an app, reading, validating and writing in one transaction so concurrent patches of
    /// different fields all take effect.
    /// - Throws: `not_found`, `validation_failed`, or `conflict` for a taken bundle id.
    func update(id: String, applying patch: AppPatch) async throws -> AppRecord
    /// Removes an app. - Throws: `not_found`.
    func delete(id: String) async throws
}

extension NewApp {
    /// The input that describes an existing record.
    package init(_ record: AppRecord) {
        self.init(
            id: record.id,
            name: record.name,
            platform: record.platform,
            bundleId: record.bundleId,
            teamId: record.teamId,
            storeURL: record.storeURL
        )
    }

    /// This input with a patch's fields applied.
    package func applying(_ patch: AppPatch) -> NewApp {
        var result = self
        if let name = patch.name { result.name = name }
        if let platform = patch.platform { result.platform = platform }
        if let bundleId = patch.bundleId { result.bundleId = bundleId }
        if let teamId = patch.teamId { result.teamId = teamId.value }
        if let storeURL = patch.storeURL { result.storeURL = storeURL.value }
        return result
    }
}

extension AppRepository {
    /// The app `id` names. - Throws: `not_found` (``KizunaError/noSuchApp(_:)``) when there is none.
    package func require(_ id: String) async throws -> AppRecord {
        guard let app = try await find(id: id) else { throw KizunaError.noSuchApp(id) }
        return app
    }
}
