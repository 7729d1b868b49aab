/// One difference between two JSON documents.
public struct JSONChange: Sendable, Hashable, Codable {
    /// What happened at ``path``.
    public enum Kind: String, Sendable, Hashable, Codable {
        case added, removed, changed
    }

    /// Where, as a JSON path such as `$.parameters.welcome.default`.
    public var path: String
    public var kind: Kind
    /// The value before; `nil` when added.
    public var before: JSONValue?
    /// The value after; `nil` when removed.
    public var after: JSONValue?

    public init(path: String, kind: Kind, before: JSONValue?, after: JSONValue?) {
        self.path = path
        self.kind = kind
        self.before = before
        self.after = after
    }
}

extension JSONValue {
    /// The differences from `self` to `other`, by path: objects member by member, arrays of equal length element by
    /// element, anything else as one change.
    public func changes(to other: JSONValue) -> [JSONChange] {
        var result: [JSONChange] = []
        Self.diff(self, other, at: .root, into: &result)
        return result
    }

    private static func diff(_ before: JSONValue, _ after: JSONValue, at path: JSONPath, into result: inout [JSONChange]) {
        guard before != after else { return }
        switch (before, after) {
        case (.object(let old), .object(let new)):
            for key in Set(old.keys).union(new.keys).sorted() {
                switch (old[key], new[key]) {
                case (let a?, let b?): diff(a, b, at: path[key], into: &result)
                case (let a?, nil): result.append(JSONChange(path: path[key].description, kind: .removed, before: a, after: nil))
                case (nil, let b?): result.append(JSONChange(path: path[key].description, kind: .added, before: nil, after: b))
                case (nil, nil): break
                }
            }
        case (.array(let old), .array(let new)) where old.count == new.count:
            for index in old.indices { diff(old[index], new[index], at: path[index], into: &result) }
        default:
            result.append(JSONChange(path: path.description, kind: .changed, before: before, after: after))
        }
    }
}
