import Foundation

extension GatePolicy {
    /// The policy document as the device with `installId` may see it, for `gate:check` to send along with the
    /// decision so the SDK can decide offline.
    ///
    /// The maintenance tester allow-list (`maintenance.allowInstallIds`) shrinks to that install, if it is on it:
    /// no device learns which other installs are testers.
    /// - Parameter installId: The calling install, or `nil` when it did not say.
    public func source(visibleTo installId: String?) -> JSONValue {
        guard case .object(var root) = source, case .object(var maintenance)? = root["maintenance"],
            let allowed = maintenance["allowInstallIds"]?.arrayValue
        else { return source }
        maintenance["allowInstallIds"] = .array(allowed.filter { $0 == installId.map(JSONValue.string) })
        root["maintenance"] = .object(maintenance)
        return .object(root)
    }
}
