import KizunaCore

/// What apple-app-site-association is generated from, read together: the apps registry and each app's settings.
struct AssociatedDomainInputs: Sendable, Hashable {
    /// Every app, in id order (the order the file's rules are tried in).
    var apps: [AppRecord]
    /// The stored settings, by app id; an app without an entry has the defaults.
    var settings: [String: AssociatedDomainSettings]
}

/// A rule run on the file's inputs inside the transaction of a change; throwing refuses the change.
typealias AssociatedDomainCheck = @Sendable (AssociatedDomainInputs) throws -> Void

/// Stores each app's associated-domain settings.
///
/// The file they lead to spans every Apple app, so a change is checked against the whole file inside the
/// transaction that stores it; what makes a file valid is ``AssociatedDomainStore``'s rule, handed in as `check`.
protocol AssociatedDomainRepository: Sendable {
    /// An app's stored settings, or `nil` when none were stored.
    func settings(app: String) async throws -> AssociatedDomainSettings?

    /// Every app's stored settings, by app id.
    func allSettings() async throws -> [String: AssociatedDomainSettings]

    /// Stores an app's settings, replacing earlier ones, if `check` accepts the file's inputs as they stand before the
    /// change; inputs and write are one transaction, taken in turns with every other change to the file, so two
    /// changes never each pass against a file without the other. A throwing `check` leaves the previous settings.
    func put(app: String, _ settings: AssociatedDomainSettings, checking check: @escaping AssociatedDomainCheck) async throws
}
