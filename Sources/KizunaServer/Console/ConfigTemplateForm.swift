import Foundation
import KizunaCore

/// The remote config template as a form: a row per parameter (name, type, default, conditional values, group,
/// description) and per condition (name, its rules — or `when` as JSON when rules cannot show it — and description),
/// with empty rows to add more and a box to remove one. Read back into the template JSON `config:publish` takes; the admin API's JSON paths are mapped to the
/// row and cell they name.
struct ConfigTemplateForm {
    struct ParameterRow: Equatable {
        var name = "", type = "string", defaultValue = "", conditional = "", group = "", description = ""
        var delete = false
    }

    struct ConditionRow: Equatable {
        var name = "", when = "", description = ""
        /// The rules that must all hold; nil when the condition is edited as JSON (`when`).
        var rules: [ConditionRule]? = Array(repeating: ConditionRule(), count: ConditionRule.spareRows)
        var delete = false

        /// The rows of the rules that are filled in, with their indices.
        var filledRules: [(index: Int, rule: ConditionRule)] {
            (rules ?? []).enumerated().filter { !$1.kind.isEmpty || !$1.value.trimmingCharacters(in: .whitespaces).isEmpty }.map { ($0, $1) }
        }
    }

    var parameters: [ParameterRow]
    var conditions: [ConditionRow]
    var message: String
    /// The version the form changes: what the publish's `If-Match` names.
    var base: Int64

    /// Empty rows offered to add parameters and conditions.
    static let spareRows = 3

    /// The form filled from a published template, with the spare rows.
    init(document: JSONValue, base: Int64) {
        let object = document.objectValue ?? [:]
        parameters =
            (object["parameters"]?.objectValue ?? [:]).sorted { $0.key < $1.key }.map { name, value in
                let parameter = value.objectValue ?? [:]
                let type = RemoteConfigTemplate.ValueType(rawValue: parameter["type"]?.stringValue ?? "") ?? .string
                let conditional = (parameter["conditionalValues"]?.objectValue ?? [:]).sorted { $0.key < $1.key }.map {
                    "\($0.key) = \(Self.text($0.value))"
                }
                return ParameterRow(
                    name: name, type: type.rawValue, defaultValue: parameter["default"].map(Self.text) ?? "",
                    conditional: conditional.joined(separator: "\n"), group: parameter["group"]?.stringValue ?? "",
                    description: parameter["description"]?.stringValue ?? "")
            } + Array(repeating: ParameterRow(), count: Self.spareRows)
        conditions =
            (object["conditions"]?.arrayValue ?? []).map { value in
                let condition = value.objectValue ?? [:]
                let rules = condition["when"].map(ConditionRule.rows(of:)) ?? []
                return ConditionRow(
                    name: condition["name"]?.stringValue ?? "",
                    when: rules == nil ? condition["when"].map { ConsoleConfigPages.text(of: $0, pretty: false) } ?? "" : "",
                    description: condition["description"]?.stringValue ?? "",
                    rules: rules.map { $0 + Array(repeating: ConditionRule(), count: ConditionRule.spareRows) })
            } + Array(repeating: ConditionRow(), count: Self.spareRows)
        message = ""
        self.base = base
    }

    /// The form as posted: `p<i>-name`, `p<i>-type`, … and `c<i>-name`, … for each row shown.
    init(posted: [String: String]) {
        func rows(_ prefix: String) -> [Int] {
            Set(
                posted.keys.compactMap { key in
                    key.hasPrefix(prefix) ? Int(key.dropFirst(prefix.count).prefix { $0.isNumber }) : nil
                }
            ).sorted()
        }
        parameters = rows("p").map { i in
            ParameterRow(
                name: posted["p\(i)-name"] ?? "", type: posted["p\(i)-type"] ?? "string", defaultValue: posted["p\(i)-default"] ?? "",
                conditional: posted["p\(i)-conditional"] ?? "", group: posted["p\(i)-group"] ?? "", description: posted["p\(i)-description"] ?? "",
                delete: posted["p\(i)-delete"] == "on")
        }
        conditions = rows("c").map { i in
            // Edited as JSON when the page showed `when`; as rules otherwise.
            let rules =
                posted["c\(i)-when"] == nil
                ? rows("c\(i)-r").map { j in
                    ConditionRule(kind: posted["c\(i)-r\(j)-kind"] ?? "", value: posted["c\(i)-r\(j)-value"] ?? "")
                } : nil
            return ConditionRow(
                name: posted["c\(i)-name"] ?? "", when: posted["c\(i)-when"] ?? "", description: posted["c\(i)-description"] ?? "", rules: rules,
                delete: posted["c\(i)-delete"] == "on")
        }
        message = posted["message"] ?? ""
        base = posted["base"].flatMap { Int64($0) } ?? 0
    }

    /// The template the rows describe, or nil with the problems of the cells that do not read. A row without a name
    /// is left out; so is a row marked for removal.
    func document(_ text: ConsoleText) -> (JSONValue?, [ConsolePages.Problem]) {
        var problems: [ConsolePages.Problem] = []
        var conditionList: [JSONValue] = []
        for (i, row) in conditions.enumerated() {
            let name = row.name.trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty, !row.delete else { continue }
            var condition: [String: JSONValue] = ["name": .string(name)]
            if row.rules != nil {
                var rules: [JSONValue] = []
                for (j, rule) in row.filledRules {
                    if let json = rule.condition(), !rule.kind.isEmpty {
                        rules.append(json)
                    } else {
                        let hint = rule.kind.isEmpty ? text[.ruleKindMissing] : "\(rule.kind): \(ConditionRule.hint(rule.kind, text))"
                        problems.append(.init(field: "c\(i)-r\(j)-value", message: "\(name): \(hint)"))
                    }
                }
                if row.filledRules.isEmpty { problems.append(.init(field: "c\(i)-r0-value", message: "\(name): \(text[.conditionNeedsRule])")) }
                condition["when"] = ConditionRule.when(rules)
            } else if let when = try? JSONValue(parsing: row.when) {
                condition["when"] = when
            } else {
                problems.append(.init(field: "c\(i)-when", message: "\(name): \(text[.conditionWhen]): \(text[.notJSONGeneric])"))
            }
            if !row.description.isEmpty { condition["description"] = .string(row.description) }
            conditionList.append(.object(condition))
        }
        var parameterMap: [String: JSONValue] = [:]
        for (i, row) in parameters.enumerated() {
            let name = row.name.trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty, !row.delete else { continue }
            guard parameterMap[name] == nil else {
                problems.append(.init(field: "p\(i)-name", message: "\(name): \(text[.duplicateName])"))
                continue
            }
            let type = RemoteConfigTemplate.ValueType(rawValue: row.type) ?? .string
            var parameter: [String: JSONValue] = ["type": .string(type.rawValue)]
            do {
                parameter["default"] = try type.value(fromText: row.defaultValue)
            } catch {
                problems.append(.init(field: "p\(i)-default", message: "\(name): \(text[.defaultValue]): \(error.message)"))
            }
            var conditional: [String: JSONValue] = [:]
            for line in row.conditional.split(whereSeparator: \.isNewline) where !line.trimmingCharacters(in: .whitespaces).isEmpty {
                let parts = line.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, !parts[0].trimmingCharacters(in: .whitespaces).isEmpty else {
                    problems.append(.init(field: "p\(i)-conditional", message: "\(name): \(text[.conditionalLineHint]) \(line)"))
                    continue
                }
                do {
                    let value = String(parts[1].drop { $0 == " " })
                    conditional[parts[0].trimmingCharacters(in: .whitespaces)] = try type.value(fromText: value)
                } catch {
                    problems.append(.init(field: "p\(i)-conditional", message: "\(name): \(text[.conditionalValues]): \(error.message)"))
                }
            }
            if !conditional.isEmpty { parameter["conditionalValues"] = .object(conditional) }
            if !row.group.trimmingCharacters(in: .whitespaces).isEmpty {
                parameter["group"] = .string(row.group.trimmingCharacters(in: .whitespaces))
            }
            if !row.description.isEmpty { parameter["description"] = .string(row.description) }
            parameterMap[name] = .object(parameter)
        }
        guard problems.isEmpty else { return (nil, problems) }
        return (.object(["conditions": .array(conditionList), "parameters": .object(parameterMap)]), [])
    }

    /// The cell an admin API error's JSON path names (`$.document.parameters.welcome.default`,
    /// `$.document.conditions[1].when.appVersion`), or nil when it names none.
    func field(ofPath path: String) -> String? {
        var rest = Substring(path)
        for prefix in ["$.document.", "$.", "document."] where rest.hasPrefix(prefix) { rest = rest.dropFirst(prefix.count) }
        if rest.hasPrefix("parameters.") {
            let tail = rest.dropFirst("parameters.".count)
            let name = String(tail.prefix { $0 != "." && $0 != "[" })
            let cell = tail.dropFirst(name.count).drop { $0 == "." }.prefix { $0 != "." && $0 != "[" }
            guard let row = parameters.firstIndex(where: { $0.name.trimmingCharacters(in: .whitespaces) == name && !$0.delete }) else { return nil }
            let suffix = ["default": "default", "conditionalValues": "conditional", "group": "group", "description": "description", "type": "type"]
            return "p\(row)-\(suffix[String(cell)] ?? "name")"
        }
        if rest.hasPrefix("conditions[") {
            let index = Int(rest.dropFirst("conditions[".count).prefix { $0.isNumber }) ?? -1
            let kept = conditions.indices.filter { !conditions[$0].name.trimmingCharacters(in: .whitespaces).isEmpty && !conditions[$0].delete }
            guard kept.indices.contains(index) else { return nil }
            let tail = rest.drop { $0 != "]" }.dropFirst().drop { $0 == "." }
            let cell = tail.prefix { $0 != "." && $0 != "[" }
            let row = conditions[kept[index]]
            guard cell == "when", row.rules != nil else {
                return "c\(kept[index])-\(cell == "name" ? "name" : cell == "description" ? "description" : "when")"
            }
            // `when.all[j]…` names the j-th filled rule; `when.<kind>…` the only one.
            let filled = row.filledRules.map(\.index)
            let within = tail.dropFirst("when".count)
            let rule = within.hasPrefix(".all[") ? Int(within.dropFirst(".all[".count).prefix { $0.isNumber }) ?? 0 : 0
            return "c\(kept[index])-r\(filled.indices.contains(rule) ? filled[rule] : filled.first ?? 0)-value"
        }
        return nil
    }

    /// A value as the form shows it: text as it is, anything else as JSON.
    static func text(_ value: JSONValue) -> String {
        if case .string(let text) = value { return text }
        return ConsoleConfigPages.text(of: value, pretty: false)
    }
}
