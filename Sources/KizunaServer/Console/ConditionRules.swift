import Foundation
import KizunaCore

/// A condition as rows of rules that must all hold, as the remote config form edits it: a kind chosen from a list
/// and its value in a short text (`>= 3.0 < 4.0`, `ios, macos`, `new-ui 0-25`). A condition these rows cannot show
/// (`any`, `not`, an attribute test, a time window) keeps its JSON.
struct ConditionRule: Equatable {
    var kind = ""
    var value = ""

    /// The kinds a row offers, in the order the list shows them.
    static let kinds = ["appVersion", "buildNumber", "osVersion", "platform", "appId", "locale", "language", "country", "installId", "percent"]
    private static let comparisons: Set<String> = ["appVersion", "buildNumber", "osVersion"]

    /// Empty rows offered below a condition's rules to add more.
    static let spareRows = 2

    /// The rows of `when`, or nil when it needs its JSON: one rule, or `all` of rules none of which nests.
    static func rows(of when: JSONValue) -> [ConditionRule]? {
        if let all = when.objectValue?["all"], when.objectValue?.count == 1 {
            guard let list = all.arrayValue else { return nil }
            let rules = list.map { rule(of: $0) }
            return rules.contains(nil) ? nil : rules.compactMap { $0 }
        }
        return rule(of: when).map { [$0] }
    }

    private static func rule(of condition: JSONValue) -> ConditionRule? {
        guard let object = condition.objectValue, object.count == 1, let (kind, operand) = object.first, kinds.contains(kind) else { return nil }
        if comparisons.contains(kind) { return ConsoleFormText.comparison(operand).map { ConditionRule(kind: kind, value: $0) } }
        if kind == "percent" {
            guard let percent = operand.objectValue, percent.count == 3, let seed = percent["seed"]?.stringValue, !seed.isEmpty,
                !seed.contains(where: \.isWhitespace), let from = percent["from"]?.numberValue, let to = percent["to"]?.numberValue
            else { return nil }
            return ConditionRule(kind: kind, value: "\(seed) \(ConsoleFormText.number(from))-\(ConsoleFormText.number(to))")
        }
        return ConsoleFormText.list(operand).map { ConditionRule(kind: kind, value: $0) }
    }

    /// The rule's JSON, or nil when its value does not read (the problem to show is `hint(_:)`'s).
    func condition() -> JSONValue? {
        let value = value.trimmingCharacters(in: .whitespaces)
        if Self.comparisons.contains(kind) { return ConsoleFormText.comparison(value).map { .object([kind: $0]) } }
        if kind == "percent" {
            let parts = value.split(whereSeparator: \.isWhitespace)
            let bounds = parts.last?.split(separator: "-", maxSplits: 1).compactMap { Double($0) } ?? []
            guard parts.count == 2, bounds.count == 2 else { return nil }
            return .object([kind: .object(["seed": .string(String(parts[0])), "from": .number(bounds[0]), "to": .number(bounds[1])])])
        }
        let items = ConsoleFormText.list(value)
        return items.isEmpty ? nil : .object([kind: .array(items.map { .string($0) })])
    }

    /// What a value of `kind` looks like, for a row whose value does not read.
    static func hint(_ kind: String, _ text: ConsoleText) -> String {
        comparisons.contains(kind) ? text[.comparisonHint] : kind == "percent" ? text[.percentHint] : text[.listHint]
    }

    /// The condition all of `rules` make: the rule itself when there is one.
    static func when(_ rules: [JSONValue]) -> JSONValue {
        rules.count == 1 ? rules[0] : .object(["all": .array(rules)])
    }
}
