import KizunaCore

/// Each app's associated-domain settings, and the apple-app-site-association file generated from them and the
/// apps registry: which apps appear in the file, and what makes a file Apple accepts.
struct AssociatedDomainStore: Sendable {
    /// The apps registry.
    let apps: any AppRepository
    /// The stored settings.
    let repository: any AssociatedDomainRepository

    /// An app's settings; the defaults (shares web credentials, opens no links) when none were stored.
    func settings(app: String) async throws -> AssociatedDomainSettings {
        try await repository.settings(app: app) ?? AssociatedDomainSettings()
    }

    /// The file for every Apple app with a team id, in app-id order (the order its rules are tried in), or for one.
    func file(onlyApp: String? = nil) async throws -> AppSiteAssociation {
        let inputs = AssociatedDomainInputs(apps: try await apps.list(), settings: try await repository.allSettings())
        return AppSiteAssociation(generating: Self.entries(of: inputs, onlyApp: onlyApp))
    }

    /// Stores an app's settings after checking that the whole file they lead to is valid and at most 128 KB; a
    /// refused change leaves the previous settings in force.
    /// - Throws: `not_found` for an unknown app; `validation_failed` for an app that is not in the file (not Apple's,
    ///   or without a team id), or a file that conflicts or is too large.
    func put(app: String, _ settings: AssociatedDomainSettings) async throws {
        try await repository.put(app: app, settings) { inputs in
            guard let record = inputs.apps.first(where: { $0.id == app }) else {
                throw KizunaError.noSuchApp(app)
            }
            guard record.platform.isApple, record.teamId != nil else {
                throw KizunaError(
                    .validationFailed,
                    "App '\(app)' is a \(record.platform.rawValue) app; only Apple apps with a team id appear in apple-app-site-association.",
                    field: "platform")
            }
            var changed = inputs
            changed.settings[app] = settings
            try Self.check(changed)
        }
    }

    /// The id of an app the registry has. - Throws: `not_found`.
    func requireApp(_ id: String) async throws -> String {
        guard try await apps.find(id: id) != nil else {
            throw KizunaError.noSuchApp(id)
        }
        return id
    }

    /// Refuses inputs whose file would conflict or pass 128 KB (naming its size). Run inside the transaction of every
    /// change to the file: settings changes, and app changes, since any Apple app changes the file.
    static func check(_ inputs: AssociatedDomainInputs) throws {
        let found = entries(of: inputs, onlyApp: nil)
        let file = AppSiteAssociation(generating: found)
        let problems = AppSiteAssociation.problems(in: found)
        if !problems.isEmpty {
            throw KizunaError(.validationFailed, "The associated-domain settings conflict with the file.", details: problems)
        }
        _ = try file.encoded()  // refuses a file over 128 KB, naming its size
    }

    /// The file's entries: every Apple app with a team id (or only `onlyApp`), in app-id order, with its settings.
    static func entries(of inputs: AssociatedDomainInputs, onlyApp: String?) -> [AppSiteAssociation.Entry] {
        inputs.apps.compactMap { app -> AppSiteAssociation.Entry? in
            guard onlyApp == nil || onlyApp == app.id, app.platform.isApple, let team = app.teamId else { return nil }
            return AppSiteAssociation.Entry(teamId: team, bundleId: app.bundleId, settings: inputs.settings[app.id] ?? AssociatedDomainSettings())
        }
    }
}
