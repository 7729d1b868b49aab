import Foundation
import KizunaCore

/// The update gate's policy as a form: versions, blocked versions and ranges (a line each), maintenance with its window
/// and testers, the OS requirement with its deadline and weekly windows (a row each: days, times, time zone), OS
/// advisories (a row each: versions, platforms, action, link and texts), and each prompt's link and texts per
/// language. Read back into the policy JSON `gate:publish` takes; the admin API's JSON paths are mapped to the fields.
/// Windows or advisories the rows cannot show (a link of `null`, say) keep their JSON.
struct GatePolicyForm {
    /// Every field's text, by the form's field name.
    var fields: [String: String]
    var message: String
    var base: Int64

    static let noticeKinds = GatePolicy.NoticeKind.allCases.map(\.rawValue)

    /// The form filled from a published policy.
    init(document: JSONValue, base: Int64) {
        let policy = document.objectValue ?? [:]
        var fields: [String: String] = [:]
        func json(_ value: JSONValue?) -> String { value.map { ConsoleConfigPages.text(of: $0, pretty: false) } ?? "" }
        func string(_ value: JSONValue?) -> String { value.map { $0.stringValue ?? json($0) } ?? "" }
        for key in ["minimumVersion", "recommendedVersion", "defaultLanguage"] { fields[key] = string(policy[key]) }
        fields["nagIntervalSeconds"] = policy["nagIntervalSeconds"].map { json($0) } ?? ""
        fields["blockedVersions"] = (policy["blockedVersions"]?.arrayValue ?? []).map { ConsoleFormText.comparison($0) ?? string($0) }
            .joined(separator: "\n")
        let maintenance = policy["maintenance"]?.objectValue ?? [:]
        fields["maintenanceActive"] = maintenance["active"] == .bool(true) ? "on" : ""
        let window = maintenance["window"]?.objectValue ?? [:]
        (fields["maintenanceFrom"], fields["maintenanceUntil"], fields["maintenanceTimeZone"]) =
            (string(window["from"]), string(window["until"]), string(window["timeZone"]))
        fields["maintenanceTesters"] = (maintenance["allowInstallIds"]?.arrayValue ?? []).map { string($0) }.joined(separator: "\n")
        let os = policy["minimumOSVersion"]?.objectValue ?? [:]
        (fields["osVersion"], fields["osDeadline"], fields["osTimeZone"]) = (string(os["version"]), string(os["deadline"]), string(os["timeZone"]))
        let windows = os["windows"]?.arrayValue ?? []
        if let rows = Self.windowRows(windows) {
            for (j, row) in (rows + [[:]]).enumerated() {
                fields["osw\(j)-from"] = ""  // every row has a from, so a spare one is shown too
                for (key, value) in row { fields["osw\(j)-\(key)"] = value }
            }
        } else {
            fields["osWindows"] = json(os["windows"])
        }
        let advisories = policy["osAdvisories"]?.arrayValue ?? []
        if let rows = Self.advisoryRows(advisories) {
            for (j, row) in (rows + [[:]]).enumerated() {
                fields["osa\(j)-versions"] = ""
                for (key, value) in row { fields["osa\(j)-\(key)"] = value }
            }
        } else {
            fields["osAdvisories"] = json(policy["osAdvisories"])
        }
        let notices = policy["notices"]?.objectValue ?? [:]
        for kind in Self.noticeKinds {
            let notice = notices[kind]?.objectValue ?? [:]
            fields["notice-\(kind)-url"] = string(notice["url"])
            fields["notice-\(kind)-texts"] = Self.textLines(notice["texts"])
        }
        self.fields = fields
        message = ""
        self.base = base
    }

    init(posted: [String: String]) {
        fields = posted.filter { $0.key != "csrf" && $0.key != "base" && $0.key != "message" }
        message = posted["message"] ?? ""
        base = posted["base"].flatMap { Int64($0) } ?? 0
    }

    subscript(_ name: String) -> String { fields[name] ?? "" }

    /// The policy the fields describe, or nil with the problems of the fields that do not read. Empty fields are
    /// left out of the policy.
    func document(_ text: ConsoleText) -> (JSONValue?, [ConsolePages.Problem]) {
        var problems: [ConsolePages.Problem] = []
        func lines(_ name: String) -> [String] {
            self[name].split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
        func json(_ name: String) -> JSONValue? {
            guard !trimmed(name).isEmpty else { return nil }
            if let value = try? JSONValue(parsing: trimmed(name)) { return value }
            problems.append(.init(field: name, message: "\(GatePolicyForm.label(name, text)): \(text[.notJSONGeneric])"))
            return nil
        }
        var policy: [String: JSONValue] = [:]
        for key in ["minimumVersion", "recommendedVersion", "defaultLanguage"] where !trimmed(key).isEmpty { policy[key] = .string(trimmed(key)) }
        if !trimmed("nagIntervalSeconds").isEmpty {
            if let seconds = Double(trimmed("nagIntervalSeconds")) {
                policy["nagIntervalSeconds"] = .number(seconds)
            } else {
                problems.append(.init(field: "nagIntervalSeconds", message: "\(Self.label("nagIntervalSeconds", text)): \(text[.notWholeNumber])"))
            }
        }
        // A line is a version, a range (>= 3.11.0 < 3.11.3), or a range as JSON ({">=": "3.11.0", "<": "3.11.3"}).
        let blocked: [JSONValue] = lines("blockedVersions").map { line in
            if line.hasPrefix("{") { return (try? JSONValue(parsing: line)) ?? .string(line) }
            if line.contains(where: { "<>=!".contains($0) }) {
                if let range = ConsoleFormText.comparison(line) { return range }
                problems.append(.init(field: "blockedVersions", message: "\(Self.label("blockedVersions", text)): \(text[.comparisonHint]) \(line)"))
            }
            return .string(line)
        }
        if !blocked.isEmpty { policy["blockedVersions"] = .array(blocked) }
        var maintenance: [String: JSONValue] = [:]
        if self["maintenanceActive"] == "on" { maintenance["active"] = true }
        var window: [String: JSONValue] = [:]
        for (key, field) in [("from", "maintenanceFrom"), ("until", "maintenanceUntil"), ("timeZone", "maintenanceTimeZone")]
        where !trimmed(field).isEmpty {
            window[key] = .string(trimmed(field))
        }
        if !window.isEmpty { maintenance["window"] = .object(window) }
        if !lines("maintenanceTesters").isEmpty { maintenance["allowInstallIds"] = .array(lines("maintenanceTesters").map { .string($0) }) }
        if !maintenance.isEmpty { policy["maintenance"] = .object(maintenance) }
        var os: [String: JSONValue] = [:]
        for (key, field) in [("version", "osVersion"), ("deadline", "osDeadline"), ("timeZone", "osTimeZone")] where !trimmed(field).isEmpty {
            os[key] = .string(trimmed(field))
        }
        if fields["osWindows"] != nil {
            if let windows = json("osWindows") { os["windows"] = windows }
        } else if !windowRowsFilled.isEmpty {
            os["windows"] = .array(windowRowsFilled.map { self.window($0) })
        }
        if !os.isEmpty { policy["minimumOSVersion"] = .object(os) }
        if fields["osAdvisories"] != nil {
            if let advisories = json("osAdvisories") { policy["osAdvisories"] = advisories }
        } else if !advisoryRowsFilled.isEmpty {
            policy["osAdvisories"] = .array(advisoryRowsFilled.map { advisory($0, text, &problems) })
        }
        var notices: [String: JSONValue] = [:]
        for kind in Self.noticeKinds {
            var notice: [String: JSONValue] = [:]
            if !trimmed("notice-\(kind)-url").isEmpty { notice["url"] = .string(trimmed("notice-\(kind)-url")) }
            if let texts = texts("notice-\(kind)-texts", label: kind, text, &problems) { notice["texts"] = texts }
            if !notice.isEmpty { notices[kind] = .object(notice) }
        }
        if !notices.isEmpty { policy["notices"] = .object(notices) }
        return problems.isEmpty ? (.object(policy), []) : (nil, problems)
    }

    /// The field an admin API error's JSON path names (`$.document.maintenance.window.until` is `maintenanceUntil`).
    func field(ofPath path: String) -> String? {
        var rest = path
        for prefix in ["$.document.", "$."] where rest.hasPrefix(prefix) { rest.removeFirst(prefix.count) }
        let parts = rest.split(whereSeparator: { $0 == "." || $0 == "[" }).map(String.init)
        guard let head = parts.first else { return nil }
        switch head {
        case "minimumVersion", "recommendedVersion", "defaultLanguage", "nagIntervalSeconds", "blockedVersions": return head
        case "osAdvisories":
            // `osAdvisories[k].notice.texts…` names the k-th filled row's texts.
            guard fields["osAdvisories"] == nil, parts.count > 1, let k = Int(parts[1].dropLast()), advisoryRowsFilled.indices.contains(k) else {
                return fields["osAdvisories"] == nil ? advisoryRowsFilled.first.map { "osa\($0)-versions" } : head
            }
            let cell = parts.count > 2 ? parts[2] : "osVersion"
            let suffix =
                cell == "notice"
                ? (parts.count > 3 && parts[3] == "url" ? "url" : "texts") : ["platforms": "platforms", "action": "action"][cell] ?? "versions"
            return "osa\(advisoryRowsFilled[k])-\(suffix)"
        case "maintenance":
            guard parts.count > 1 else { return "maintenanceActive" }
            if parts[1] == "allowInstallIds" { return "maintenanceTesters" }
            if parts[1] == "window" {
                return parts.count > 2 && parts[2] == "until"
                    ? "maintenanceUntil" : parts.count > 2 && parts[2] == "timeZone" ? "maintenanceTimeZone" : "maintenanceFrom"
            }
            return "maintenanceActive"
        case "minimumOSVersion":
            if parts.count > 2, parts[1] == "windows", fields["osWindows"] == nil, let k = Int(parts[2].dropLast()),
                windowRowsFilled.indices.contains(k)
            {
                let cell = parts.count > 3 ? parts[3] : "days"
                return "osw\(windowRowsFilled[k])-\(["from": "from", "until": "until", "timeZone": "timeZone"][cell] ?? "days")"
            }
            let map = ["deadline": "osDeadline", "timeZone": "osTimeZone", "windows": "osWindows"]
            return parts.count > 1 ? map[parts[1]] ?? "osVersion" : "osVersion"
        case "notices":
            guard parts.count > 1, Self.noticeKinds.contains(parts[1]) else { return nil }
            return parts.count > 2 && parts[2] == "url" ? "notice-\(parts[1])-url" : "notice-\(parts[1])-texts"
        default: return nil
        }
    }

    /// A field's label, for problems and the form.
    static func label(_ name: String, _ text: ConsoleText) -> String {
        let words: [String: ConsoleWord] = [
            "minimumVersion": .minimumVersionLabel, "recommendedVersion": .recommendedVersionLabel, "nagIntervalSeconds": .nagIntervalLabel,
            "defaultLanguage": .defaultLanguageLabel, "blockedVersions": .blockedVersionsLabel, "maintenanceActive": .maintenanceActiveLabel,
            "maintenanceFrom": .windowFromLabel, "maintenanceUntil": .windowUntilLabel, "maintenanceTimeZone": .timeZoneLabel,
            "maintenanceTesters": .testersLabel, "osVersion": .osVersionRequiredLabel, "osDeadline": .osDeadlineLabel, "osTimeZone": .timeZoneLabel,
            "osWindows": .osWindowsLabel, "osAdvisories": .osAdvisoriesLabel,
        ]
        if let word = words[name] { return text[word] }
        if let row = rowLabel(name, text) { return row }
        if name.hasPrefix("notice-") { return name.hasSuffix("-url") ? text[.noticeURLLabel] : text[.noticeTextsLabel] }
        return name
    }
}
