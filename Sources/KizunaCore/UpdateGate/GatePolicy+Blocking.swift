/// Blocking a release: the gate policy document with a version added to, or taken out of, `blockedVersions`.
/// What `kizuna release block`/`unblock` and the console's Releases page publish.
extension GatePolicy {
    /// `policy` with `version` in `blockedVersions` (when `block`) or out of it; nil when it already is as asked.
    ///
    /// Versions compare as versions (`3.10` is `3.10.0`); ranges and other entries are left as they are, and an
    /// emptied list is removed.
    public static func changingBlock(of version: SemanticVersion, block: Bool, in policy: JSONValue) -> JSONValue? {
        var object = policy.objectValue ?? [:]
        var blocked = object["blockedVersions"]?.arrayValue ?? []
        let same = { (entry: JSONValue) in entry.stringValue.flatMap { try? SemanticVersion(parsing: $0) } == version }
        if block {
            guard !blocked.contains(where: same) else { return nil }
            blocked.append(.string(version.description))
        } else {
            guard blocked.contains(where: same) else { return nil }
            blocked.removeAll(where: same)
        }
        object["blockedVersions"] = blocked.isEmpty ? nil : .array(blocked)
        return .object(object)
    }
}
