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
        guard let object = value.objectValue else {
            problem(path, "must be an object, not \(value.typeName)", code: "wrong_type")
            return nil
        }
        return object
    }

    /// The array at `path`, or `nil` after recording a problem.
    package mutating func array(_ value: JSONValue, at path: JSONPath) -> [JSONValue]? {
        guard let array = value.arrayValue else {
            problem(path, "must be an array, not \(value.typeName)", code: "wrong_type")
            return nil
        }
        return array
    }

    /// The string at `path`, or `nil` after recording a problem.
    package mutating func string(_ value: JSONValue, at path: JSONPath) -> String? {
        guard let string = value.stringValue else {
            problem(path, "must be a string, not \(value.typeName)", code: "wrong_type")
            return nil
        }
        return string
    }

    /// The number at `path`, or `nil` after recording a problem.
    package mutating func number(_ value: JSONValue, at path: JSONPath) -> Double? {
        guard let number = value.numberValue else {
            problem(path, "must be a number, not \(value.typeName)", code: "wrong_type")
            return nil
        }
        return number
    }

    /// The bool at `path`, or `nil` after recording a problem.
    package mutating func bool(_ value: JSONValue, at path: JSONPath) -> Bool? {
        guard let bool = value.boolValue else {
            problem(path, "must be true or false, not \(value.typeName)", code: "wrong_type")
            return nil
        }
        return bool
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
