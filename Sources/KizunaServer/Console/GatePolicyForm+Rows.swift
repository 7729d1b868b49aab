import Foundation
import KizunaCore

/// The policy form's rows: the OS requirement's weekly windows (`osw<j>-…`: a box per weekday, from, until, time zone)
/// and the OS advisories (`osa<j>-…`: versions, platforms, action, link, texts), and the texts per language that
/// prompts and advisories share (`ja | title | message`, a line each).
extension GatePolicyForm {
    /// The weekdays in the order the form shows them.
    static let weekdays = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]

    /// The fields of each window, or nil when one cannot be shown as a row (it keeps its JSON).
    static func windowRows(_ windows: [JSONValue]) -> [[String: String]]? {
        var rows: [[String: String]] = []
        for window in windows {
            guard let object = window.objectValue, Set(object.keys).isSubset(of: ["days", "from", "until", "timeZone"]),
                let days = object["days"]?.arrayValue?.compactMap(\.stringValue), days.allSatisfy({ weekdays.contains($0.lowercased()) })
            else { return nil }
            var row: [String: String] = [:]
            for key in ["from", "until", "timeZone"] {
                guard let value = object[key] else { continue }
                guard let text = value.stringValue else { return nil }
                row[key] = text
            }
            for day in days { row[day.lowercased()] = "on" }
            rows.append(row)
        }
        return rows
    }

    /// The fields of each advisory, or nil when one cannot be shown as a row (it keeps its JSON).
    static func advisoryRows(_ advisories: [JSONValue]) -> [[String: String]]? {
        var rows: [[String: String]] = []
        for advisory in advisories {
            guard let object = advisory.objectValue, Set(object.keys).isSubset(of: ["osVersion", "platforms", "action", "notice"]) else { return nil }
            var row: [String: String] = [:]
            switch object["osVersion"] {
            case .string(let version)?: row["versions"] = version
            case let range?: guard let text = ConsoleFormText.comparison(range) else { return nil }; row["versions"] = text
            case nil: break
            }
            if let platforms = object["platforms"] {
                guard let list = ConsoleFormText.list(platforms) else { return nil }
                row["platforms"] = list
            }
            if let action = object["action"] {
                guard let name = action.stringValue else { return nil }
                row["action"] = name
            }
            if let notice = object["notice"] {
                guard let parts = notice.objectValue, Set(parts.keys).isSubset(of: ["url", "texts"]) else { return nil }
                if let url = parts["url"] {
                    guard let link = url.stringValue else { return nil }
                    row["url"] = link
                }
                row["texts"] = textLines(parts["texts"])
            }
            rows.append(row)
        }
        return rows
    }

    /// Texts per language as lines: `ja | title | message`.
    static func textLines(_ texts: JSONValue?) -> String {
        (texts?.objectValue ?? [:]).sorted { $0.key < $1.key }.map { language, text in
            "\(language) | \(text["title"]?.stringValue ?? "") | \(text["message"]?.stringValue ?? "")"
        }.joined(separator: "\n")
    }

    /// The rows shown with `prefix` (`osw`, `osa`), in order.
    func rowIndices(_ prefix: String) -> [Int] {
        Set(fields.keys.compactMap { key in key.hasPrefix(prefix) ? Int(key.dropFirst(prefix.count).prefix { $0.isNumber }) : nil }).sorted()
    }

    /// The window rows with anything filled in: the policy's `windows`, in order.
    var windowRowsFilled: [Int] {
        rowIndices("osw").filter { j in
            Self.weekdays.contains { self["osw\(j)-\($0)"] == "on" } || ["from", "until", "timeZone"].contains { !trimmed("osw\(j)-\($0)").isEmpty }
        }
    }

    /// The advisory rows with anything filled in (the action alone, a list's default, does not count).
    var advisoryRowsFilled: [Int] {
        rowIndices("osa").filter { j in ["versions", "platforms", "url", "texts"].contains { !trimmed("osa\(j)-\($0)").isEmpty } }
    }

    /// Row `j`'s window. What is missing is left out, for the policy's validation to name at its cell.
    func window(_ j: Int) -> JSONValue {
        var window: [String: JSONValue] = ["days": .array(Self.weekdays.filter { self["osw\(j)-\($0)"] == "on" }.map { .string($0) })]
        for key in ["from", "until", "timeZone"] where !trimmed("osw\(j)-\(key)").isEmpty { window[key] = .string(trimmed("osw\(j)-\(key)")) }
        return .object(window)
    }

    /// Row `j`'s advisory: versions as a version or a range, platforms as a list, and a notice when it has a link or texts.
    func advisory(_ j: Int, _ text: ConsoleText, _ problems: inout [ConsolePages.Problem]) -> JSONValue {
        var advisory: [String: JSONValue] = [:]
        let versions = trimmed("osa\(j)-versions")
        if versions.contains(where: { "<>=!".contains($0) }) {
            if let range = ConsoleFormText.comparison(versions) {
                advisory["osVersion"] = range
            } else {
                problems.append(.init(field: "osa\(j)-versions", message: "\(Self.label("osa\(j)-versions", text)): \(text[.comparisonHint])"))
            }
        } else if !versions.isEmpty {
            advisory["osVersion"] = .string(versions)
        }
        let platforms = ConsoleFormText.list(self["osa\(j)-platforms"])
        if !platforms.isEmpty { advisory["platforms"] = .array(platforms.map { .string($0) }) }
        if !trimmed("osa\(j)-action").isEmpty { advisory["action"] = .string(trimmed("osa\(j)-action")) }
        var notice: [String: JSONValue] = [:]
        if !trimmed("osa\(j)-url").isEmpty { notice["url"] = .string(trimmed("osa\(j)-url")) }
        if let texts = texts("osa\(j)-texts", label: Self.label("osa\(j)-texts", text), text, &problems) { notice["texts"] = texts }
        if !notice.isEmpty { advisory["notice"] = .object(notice) }
        return .object(advisory)
    }

    /// The texts per language in field `name`, or nil when it is empty; a line that does not read is a problem there.
    func texts(_ name: String, label: String, _ text: ConsoleText, _ problems: inout [ConsolePages.Problem]) -> JSONValue? {
        var texts: [String: JSONValue] = [:]
        for line in self[name].split(whereSeparator: \.isNewline) where !line.trimmingCharacters(in: .whitespaces).isEmpty {
            let parts = line.split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 3, !parts[0].isEmpty else {
                problems.append(.init(field: name, message: "\(label): \(text[.noticeLineHint]) \(line)"))
                continue
            }
            texts[parts[0]] = .object(["title": .string(parts[1]), "message": .string(parts[2])])
        }
        return texts.isEmpty ? nil : .object(texts)
    }

    func trimmed(_ name: String) -> String {
        self[name].trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The label of a row's field with its row, such as "Window 2: Window from", for the problems' summary.
    static func rowLabel(_ name: String, _ text: ConsoleText) -> String? {
        guard let (row, cell) = rowAndCell(name, text) else { return nil }
        return "\(row): \(cell)"
    }

    /// The label of a row's field inside its row's fieldset, whose legend names the row: "Window from".
    static func cellLabel(_ name: String, _ text: ConsoleText) -> String {
        rowAndCell(name, text)?.cell ?? label(name, text)
    }

    private static func rowAndCell(_ name: String, _ text: ConsoleText) -> (row: String, cell: String)? {
        let isWindow = name.hasPrefix("osw")
        guard isWindow || name.hasPrefix("osa"), let j = Int(name.dropFirst(3).prefix { $0.isNumber }) else { return nil }
        let cell = String(name.drop { $0 != "-" }.dropFirst())
        let words: [String: ConsoleWord] = [
            "from": .windowFromLabel, "until": .windowUntilLabel, "timeZone": .timeZoneLabel, "days": .daysLabel, "versions": .osVersionsLabel,
            "platforms": .platformsLabel, "action": .actionLabel, "url": .noticeURLLabel, "texts": .noticeTextsLabel,
        ]
        return ("\(text[isWindow ? .osWindowRow : .osAdvisoryRow]) \(j + 1)", words[cell].map { text[$0] } ?? cell)
    }
}
