import KizunaCore

extension DataFilter {
    /// Whether `record` matches the filter, decided in memory exactly as ``condition`` decides in the table on
    /// ``dialect``: what a subscription tests each change's record with, with no read of the store.
    ///
    /// Text compares as the engines compare it: byte for byte (so `é` written precomposed and decomposed differ, as
    /// they do in SQL, though Swift's `==` calls them equal), ordered by code point, which is SQLite's `BINARY` and
    /// PostgreSQL's order under a `C`, `C.UTF-8` or `ucs_basic` collation. A PostgreSQL database created with a
    /// linguistic collation (`en_US.UTF-8`) orders text by its locale for `lt`, `le`, `gt`, `ge` and `between`,
    /// which this does not reproduce; equality, `beginsWith`, `contains`, `in` are bytes under every deterministic
    /// collation.
    /// - Parameter record: The record's stored fields, as ``DataRecords/stored(_:model:)`` reads them and a change's
    ///   `record` carries them: a list as an array, a DateTime as epoch milliseconds; an unset field absent or `null`.
    package func matches(_ record: [String: JSONValue]) -> Bool {
        node?.holds(on: record, dialect: dialect) ?? true
    }
}

extension FilterNode {
    /// Whether the node holds for `record` (stored form), as its SQL (``FilterCompiler/sql(_:)``) holds for the row.
    ///
    /// Two-valued logic is exact here: SQL's NULL only arises in a test on an unset field, and never reaches a `NOT`
    /// unguarded (see ``FilterCompiler/sql(_:)``), so "NULL" and "false" are never told apart.
    func holds(on record: [String: JSONValue], dialect: DataTables.Dialect) -> Bool {
        switch self {
        case .and(let parts): return parts.allSatisfy { $0.holds(on: record, dialect: dialect) }
        case .or(let parts): return parts.contains { $0.holds(on: record, dialect: dialect) }
        case .not(let inner): return !inner.holds(on: record, dialect: dialect)
        case .nothing: return false
        case .test(let field, let test): return test.holds(on: record[field.name] ?? .null, of: field, dialect: dialect)
        }
    }
}

extension FieldTest {
    /// Whether the test holds for `value`, the field's stored value (`null` when unset).
    func holds(on value: JSONValue, of field: DataField, dialect: DataTables.Dialect) -> Bool {
        // A test on an unset field is NULL in SQL, so false; its negated forms say `IS NULL OR …`, so true.
        let isSet = value != .null
        switch self {
        case .exists(let exists):
            return isSet == exists
        case .equal(let bound, let negated):
            guard isSet else { return negated }
            return (Self.compare(value, bound) == 0) != negated
        case .document(let text, let document, let negated):
            guard isSet else { return negated }
            let equal: Bool
            switch dialect {
            // `json(col) = json(?)`: the texts, both minified; the column holds what the write made of the value.
            case .sqlite: equal = Self.sameBytes(Self.columnText(value, of: field), text)
            case .postgres: equal = Self.jsonbEqual(value, document)
            }
            return equal != negated
        case .order(let order, let bound):
            guard isSet, let comparison = Self.compare(value, bound) else { return false }
            switch order {
            case .lt: return comparison < 0
            case .le: return comparison <= 0
            case .gt: return comparison > 0
            case .ge: return comparison >= 0
            }
        case .between(let low, let high):
            guard isSet, let above = Self.compare(value, low), let below = Self.compare(value, high) else { return false }
            return above >= 0 && below <= 0
        case .beginsWith(let prefix):
            guard case .string(let text) = value else { return false }
            return text.utf8.starts(with: prefix.utf8)
        case .containsText(let part, let negated):
            guard case .string(let text) = value else { return negated }
            return Self.bytes(of: text, contain: part) != negated
        case .containsElement(let element, let negated):
            guard case .array(let elements) = value else { return negated }
            let found: Bool
            switch dialect {
            case .sqlite: found = elements.contains { Self.sqliteEquals($0, element) }
            case .postgres: found = Self.jsonbContains(.array(elements), .array([element.json]))
            }
            return found != negated
        case .oneOf(let values, let negated):
            guard isSet else { return negated }
            return (values.contains { Self.compare(value, $0) == 0 }) != negated
        }
    }

    // MARK: Scalars

    /// How a stored scalar compares with a bound value, as `=`, `<` and `>` compare a column with a parameter: text
    /// byte by byte (code point order), numbers by value, `false` before `true`. `nil` when they cannot be compared
    /// (a value of another type, which a column of the field's type never holds).
    static func compare(_ value: JSONValue, _ bound: StoredValue) -> Int? {
        switch (value, bound) {
        case (.string(let text), .text(let other)):
            if sameBytes(text, other) { return 0 }
            return text.utf8.lexicographicallyPrecedes(other.utf8) ? -1 : 1
        case (.number(let number), .integer(let other)): return numericOrder(number, Double(other))
        case (.number(let number), .real(let other)): return numericOrder(number, other)
        case (.bool(let flag), .bool(let other)): return flag == other ? 0 : (other ? -1 : 1)
        default: return nil
        }
    }

    private static func numericOrder(_ first: Double, _ second: Double) -> Int {
        first < second ? -1 : (first > second ? 1 : 0)
    }

    /// Equal as SQL's `=` finds text under a deterministic collation: the same bytes.
    static func sameBytes(_ first: String, _ second: String) -> Bool {
        first.utf8.elementsEqual(second.utf8)
    }

    /// Whether `text` holds `part`'s bytes, as `instr` and `strpos` find it: for UTF-8, a match of bytes is a match of
    /// characters. The empty text is in every text.
    static func bytes(of text: String, contain part: String) -> Bool {
        let haystack = Array(text.utf8)
        let needle = Array(part.utf8)
        guard !needle.isEmpty else { return true }
        guard needle.count <= haystack.count else { return false }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if haystack[start..<(start + needle.count)].elementsEqual(needle) { return true }
        }
        return false
    }

    // MARK: Lists and JSON on SQLite

    /// The JSON text the column holds for `value`, as ``DataWrite`` wrote it: a list's elements each as
    /// ``StoredValue/jsonElement`` (an Int without a fraction), a JSON document as canonical JSON.
    static func columnText(_ value: JSONValue, of field: DataField) -> String {
        guard field.isList, case .array(let elements) = value else { return StoredValue.jsonText(value) }
        let texts = elements.map { element -> String in
            switch (field.type, element) {
            case (.scalar(.int), .number(let number)), (.scalar(.dateTime), .number(let number)):
                if let integer = Int64(exactly: number) { return StoredValue.integer(integer).jsonElement }
                return StoredValue.jsonText(element)
            default:
                return StoredValue.jsonText(element)
            }
        }
        return "[" + texts.joined(separator: ",") + "]"
    }

    /// Whether a list element, as SQLite's `json_each` reads it, is `=` to the bound value: a string element is its
    /// text, a number a number, `true` and `false` the integers 1 and 0, an array or object its JSON text; text
    /// and numbers are never equal.
    static func sqliteEquals(_ element: JSONValue, _ bound: StoredValue) -> Bool {
        switch bound {
        case .text(let text), .json(let text):
            switch element {
            case .string(let string): return sameBytes(string, text)
            case .array, .object: return sameBytes(StoredValue.jsonText(element), text)
            case .number, .bool, .null: return false
            }
        case .integer(let integer): return sqliteNumber(element) == Double(integer)
        case .real(let real): return sqliteNumber(element) == real
        case .bool(let flag): return sqliteNumber(element) == (flag ? 1 : 0)
        }
    }

    private static func sqliteNumber(_ element: JSONValue) -> Double? {
        switch element {
        case .number(let number): return number
        case .bool(let flag): return flag ? 1 : 0
        default: return nil
        }
    }

    // MARK: Lists and JSON on PostgreSQL

    /// JSONB's `=`: objects whatever their keys' order, arrays in order, numbers by value, strings byte for byte.
    static func jsonbEqual(_ first: JSONValue, _ second: JSONValue) -> Bool {
        switch (first, second) {
        case (.array(let these), .array(let those)):
            return these.count == those.count && zip(these, those).allSatisfy { jsonbEqual($0, $1) }
        case (.object(let these), .object(let those)):
            return these.count == those.count && these.allSatisfy { key, value in those[key].map { jsonbEqual(value, $0) } ?? false }
        default:
            return jsonbScalarsEqual(first, second)
        }
    }

    /// JSONB's `@>` between two containers, as PostgreSQL decides it: an object contains another when it has each of
    /// its keys with a value that equals (a scalar) or contains (a container of the same kind) the other's; an array
    /// contains another when each of the other's elements equals one of its scalar elements, or is contained in one
    /// of its elements of the same kind.
    static func jsonbContains(_ container: JSONValue, _ contained: JSONValue) -> Bool {
        switch (container, contained) {
        case (.object(let these), .object(let those)):
            return those.allSatisfy { key, wanted in
                guard let held = these[key] else { return false }
                return isScalar(wanted) ? jsonbScalarsEqual(held, wanted) : sameKind(held, wanted) && jsonbContains(held, wanted)
            }
        case (.array(let these), .array(let those)):
            return those.allSatisfy { wanted in
                if isScalar(wanted) { return these.contains { jsonbScalarsEqual($0, wanted) } }
                return these.contains { sameKind($0, wanted) && jsonbContains($0, wanted) }
            }
        default:
            return false
        }
    }

    private static func jsonbScalarsEqual(_ first: JSONValue, _ second: JSONValue) -> Bool {
        switch (first, second) {
        case (.null, .null): return true
        case (.bool(let this), .bool(let that)): return this == that
        case (.number(let this), .number(let that)): return this == that
        case (.string(let this), .string(let that)): return sameBytes(this, that)
        default: return false
        }
    }

    private static func isScalar(_ value: JSONValue) -> Bool {
        switch value {
        case .array, .object: return false
        case .string, .number, .bool, .null: return true
        }
    }

    private static func sameKind(_ first: JSONValue, _ second: JSONValue) -> Bool {
        switch (first, second) {
        case (.array, .array), (.object, .object): return true
        default: return false
        }
    }
}
