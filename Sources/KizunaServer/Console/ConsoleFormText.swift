import Foundation
import KizunaCore

/// The short texts the console's structured forms use where the JSON documents nest: a comparison such as
/// `>= 3.0 < 4.0` for `{">=": "3.0", "<": "4.0"}`, a list such as `ios, macos`. Each reads back exactly what it
/// shows; anything it cannot show stays JSON.
enum ConsoleFormText {
    /// The operators, in the order a comparison is shown.
    private static let operators = [">=", ">", "<=", "<", "==", "!="]

    /// `{">=": "3.0", "<": "4.0"}` as `>= 3.0 < 4.0`; nil for anything but an object of operators to strings.
    static func comparison(_ value: JSONValue) -> String? {
        guard let object = value.objectValue, !object.isEmpty else { return nil }
        var terms: [String] = []
        for op in operators {
            guard let operand = object[op] else { continue }
            guard let text = operand.stringValue, !text.isEmpty, !text.contains(where: { $0.isWhitespace || "<>=!".contains($0) }) else {
                return nil
            }
            terms.append("\(op) \(text)")
        }
        return terms.count == object.count ? terms.joined(separator: " ") : nil
    }

    /// `>= 3.0 < 4.0` (spaces optional) as `{">=": "3.0", "<": "4.0"}`; a bare `3.0` is `{"==": "3.0"}`. Nil when
    /// an operator has no operand, one is repeated, or the text is empty. The operands are checked by the document's
    /// own validation, which names them.
    static func comparison(_ text: String) -> JSONValue? {
        var rest = Substring(text.trimmingCharacters(in: .whitespaces))
        var object: [String: JSONValue] = [:]
        while !rest.isEmpty {
            let op = operators.sorted { $0.count > $1.count }.first { rest.hasPrefix($0) } ?? (object.isEmpty ? "" : nil)
            guard let op else { return nil }
            rest = rest.dropFirst(op.count).drop { $0.isWhitespace }
            let operand = rest.prefix { !$0.isWhitespace && !"<>=!".contains($0) }
            guard !operand.isEmpty, object[op.isEmpty ? "==" : op] == nil else { return nil }
            object[op.isEmpty ? "==" : op] = .string(String(operand))
            rest = rest.dropFirst(operand.count).drop { $0.isWhitespace }
        }
        return object.isEmpty ? nil : .object(object)
    }

    /// `["ios", "macos"]` as `ios, macos`; nil for anything but a list of strings without commas.
    static func list(_ value: JSONValue) -> String? {
        guard let items = value.arrayValue else { return nil }
        let strings = items.compactMap(\.stringValue)
        guard strings.count == items.count, !strings.contains(where: { $0.contains(",") || $0.isEmpty }) else { return nil }
        return strings.joined(separator: ", ")
    }

    /// `ios, macos` (commas or spaces) as `["ios", "macos"]`.
    static func list(_ text: String) -> [String] {
        text.split { $0 == "," || $0.isWhitespace }.map(String.init)
    }

    /// A number as a form shows it: `25`, not `25.0`.
    static func number(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
