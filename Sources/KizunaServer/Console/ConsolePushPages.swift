import Foundation
import KizunaCore

/// An app's Push pages: the composer with the credentials' status and the latest jobs, and a job's report.
enum ConsolePushPages {
    typealias Problem = ConsolePages.Problem
    typealias Form = ConsoleController.PushForm

    /// The job the composer's fields describe, or nil with the problems of the fields that do not read.
    static func request(_ form: Form, text: ConsoleText) -> (PushSendRequest?, [Problem]) {
        var problems: [Problem] = []
        func trimmed(_ value: String?) -> String { (value ?? "").trimmingCharacters(in: .whitespacesAndNewlines) }
        // Translations: `ja = タイトル | 本文`, one language a line.
        var titles: [String: String] = [:]
        var bodies: [String: String] = [:]
        for line in trimmed(form.translations).split(whereSeparator: \.isNewline) {
            let parts = line.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, !parts[0].isEmpty else {
                problems.append(Problem(field: "translations", message: "\(text[.translationsLabel]): \(text[.badTranslation]) \(line)"))
                continue
            }
            let texts = parts[1].split(separator: "|", maxSplits: 1, omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            if !texts[0].isEmpty { titles[parts[0]] = texts[0] }
            if texts.count > 1, !texts[1].isEmpty { bodies[parts[0]] = texts[1] }
        }
        func pushText(_ value: String, _ localized: [String: String]) -> PushText? {
            value.isEmpty && localized.isEmpty ? nil : PushText(value, localized: localized)
        }
        var message = PushMessage(title: pushText(trimmed(form.title), titles), body: pushText(trimmed(form.body), bodies))
        if !trimmed(form.sound).isEmpty { message.sound = trimmed(form.sound) }
        if !trimmed(form.badge).isEmpty {
            if let badge = Int(trimmed(form.badge)) {
                message.badge = badge
            } else {
                problems.append(Problem(field: "badge", message: "\(text[.badgeLabel]): \(text[.notWholeNumber])"))
            }
        }
        let value = trimmed(form.target)
        var target: PushTarget?
        switch form.targetKind {
        case "all": target = .all
        case "user" where !value.isEmpty: target = .users([value])
        case "condition" where !value.isEmpty:
            if let condition = try? JSONValue(parsing: value) {
                target = .condition(condition)
            } else {
                problems.append(Problem(field: "target", message: "\(text[.targetLabel]): \(text[.notJSONGeneric])"))
            }
        case "install" where !value.isEmpty: target = .installs([value])
        default: problems.append(Problem(field: "target", message: "\(text[.targetLabel]): \(text[.targetNeeded])"))
        }
        // A datetime-local value (2026-12-01T09:00): UTC, or each device's wall clock.
        let local = form.localTime == "on"
        var sendAt: String?
        if !trimmed(form.sendAt).isEmpty {
            let time = trimmed(form.sendAt).count == 16 ? trimmed(form.sendAt) + ":00" : trimmed(form.sendAt)
            sendAt = local ? time : time + "Z"
        }
        let zone = trimmed(form.fallbackTimeZone)
        guard let target, problems.isEmpty else { return (nil, problems) }
        return (
            PushSendRequest(
                target: target, message: message, sendAt: sendAt, localTime: local && sendAt != nil ? true : nil,
                fallbackTimeZone: local && !zone.isEmpty ? zone : nil), []
        )
    }

    /// The composer's field an admin API error's path (without `$.`) names.
    static func formField(_ path: String) -> String? {
        let head = path.split(separator: ".").first.map(String.init) ?? path
        switch head {
        case "target": return "target"
        case "sendAt", "localTime": return "sendAt"
        case "fallbackTimeZone": return "fallbackTimeZone"
        case "message":
            let field = path.split(separator: ".").dropFirst().first.map(String.init) ?? "body"
            return ["title", "body", "badge", "sound"].contains(field) ? field : "body"
        default: return nil
        }
    }

    /// The label of the field an admin API error's path names, for its message.
    static func label(ofField path: String, _ text: ConsoleText) -> String? {
        switch formField(path) {
        case "target": text[.targetLabel]
        case "sendAt": text[.sendAtLabel]
        case "fallbackTimeZone": text[.fallbackTimeZoneLabel]
        case "title": text[.pushTitleLabel]
        case "body": text[.pushBodyLabel]
        case "badge": text[.badgeLabel]
        case "sound": text[.soundLabel]
        default: nil
        }
    }

    /// A target as a person reads it.
    static func describe(_ target: PushTarget, _ text: ConsoleText) -> String {
        switch target {
        case .installs(let ids): "\(text[.targetInstall]): \(ids.joined(separator: ", "))"
        case .users(let ids): "\(text[.targetUser]): \(ids.joined(separator: ", "))"
        case .condition(let condition): "\(text[.targetCondition]): \(ConsoleConfigPages.text(of: condition, pretty: false))"
        case .all: text[.targetAll]
        }
    }

    /// Epoch milliseconds as a `<time>`.
    static func time(_ milliseconds: Int64) -> String {
        ConsoleAppPages.time(Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }

    static func escape(_ text: String) -> String {
        ConsolePages.escape(text)
    }
}
