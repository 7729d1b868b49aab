/// Reads a ``JSONValue`` into a domain type while recording every problem with the JSON path of its node.
///
/// The DTO-to-domain step for documents people write by hand (templates, policies): one pass finds every
/// problem, each named by a path such as `$.conditions[2].when.all[0].appVersion`, instead of stopping
/// at the first.
package struct DocumentReader: Sendable {
    /// The problems found so far.
    package private(set) var report = ValidationReport()

    package init() {}

    /// Records a problem at `path`.
    package mutating func problem(_ path: JSONPath, _ message: String, code: String = "invalid") {
        report.record(KizunaError.Detail(code: code, message: message, field: path.description))
    }

    /// The object at `path`, or `nil` after recording a problem.
    package mutating func object(_ value: JSONValue, at path: JSONPath) -> [String: JSONValue]? {
        typed(value, at: path, "an object", \.objectValue)
    }

    /// The array at `path`, or `nil` after recording a problem.
    package mutating func array(_ value: JSONValue, at path: JSONPath) -> [JSONValue]? {
        typed(value, at: path, "an array", \.arrayValue)
    }

    /// The string at `path`, or `nil` after recording a problem.
    package mutating func string(_ value: JSONValue, at path: JSONPath) -> String? {
        typed(value, at: path, "a string", \.stringValue)
    }

    /// The number at `path`, or `nil` after recording a problem.
    package mutating func number(_ value: JSONValue, at path: JSONPath) -> Double? {
        typed(value, at: path, "a number", \.numberValue)
    }

    /// The bool at `path`, or `nil` after recording a problem.
    package mutating func bool(_ value: JSONValue, at path: JSONPath) -> Bool? {
        typed(value, at: path, "true or false", \.boolValue)
    }

    private mutating func typed<T>(_ value: JSONValue, at path: JSONPath, _ expected: String, _ extract: (JSONValue) -> T?) -> T? {
        guard let typed = extract(value) else {
            problem(path, "must be \(expected), not \(value.typeName)", code: "wrong_type")
            return nil
        }
        return typed
    }

    /// A non-empty array of strings at `path`, or `nil` after recording a problem.
    package mutating func strings(_ value: JSONValue, at path: JSONPath) -> [String]? {
        guard let array = array(value, at: path) else { return nil }
        guard !array.isEmpty else {
            problem(path, "must list at least one value", code: "empty")
            return nil
        }
        var strings: [String] = []
        for (index, element) in array.enumerated() {
            if let string = string(element, at: path[index]) { strings.append(string) }
        }
        return strings.count == array.count ? strings : nil
    }

    /// Records a problem for every member of `object` outside `known`.
    package mutating func rejectUnknownKeys(_ object: [String: JSONValue], known: Set<String>, at path: JSONPath) {
        for key in object.keys.sorted() where !known.contains(key) {
            problem(path[key], "is not a known field; expected one of \(known.sorted().joined(separator: ", "))", code: "unknown_field")
        }
    }

    /// Parses `text` with `parse`, recording its error at `path`.
    package mutating func parse<Value>(
        _ value: JSONValue,
        at path: JSONPath,
        _ parse: (String) throws(VersionFormatError) -> Value
    ) -> Value? {
        guard let text = string(value, at: path) else { return nil }
        do {
            return try parse(text)
        } catch {
            problem(path, error.description, code: "bad_version")
            return nil
        }
    }

    /// Throws `validation_failed` listing every problem, if there were any.
    package func throwIfFailed(_ subject: String) throws(KizunaError) {
        try report.throwIfFailed(subject)
    }
}

/// A path into a JSON document, written `$`, `$.key`, `$.list[2]`.
package struct JSONPath: Sendable, Hashable, CustomStringConvertible {
    package let description: String

    /// The document root, `$`.
    package static let root = JSONPath(description: "$")

    private init(description: String) { self.description = description }

    /// The member `key` of this node.
    package subscript(key: String) -> JSONPath {
        let plain =
            key.first.map { $0.isASCIILetter || $0 == "_" } == true && key.allSatisfy { $0.isASCIILetter || $0.isASCIIDigit || $0 == "_" }
        return JSONPath(description: plain ? "\(description).\(key)" : "\(description)[\"\(key)\"]")
    }

    /// The element `index` of this node.
    package subscript(index: Int) -> JSONPath { JSONPath(description: "\(description)[\(index)]") }
}
