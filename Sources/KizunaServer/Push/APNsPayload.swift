import Foundation
import KizunaCore

/// What one device is sent for a ``PushMessage``: the JSON payload in its locale and the APNs headers.
struct APNsPayload: Sendable {
    /// APNs' limit on a payload: 4 KB, 5 KB for VoIP.
    static func limit(for type: APNsPushType) -> Int { type == .voip ? 5120 : 4096 }

    let bytes: [UInt8]
    let pushType: APNsPushType
    let priority: Int
    let expiration: Int64?
    let collapseId: String?

    /// The payload of `message` for a device in `locale`.
    init(_ message: PushMessage, locale: String?) {
        var aps: [String: JSONValue] = [:]
        var alert: [String: JSONValue] = [:]
        if let title = message.title { alert["title"] = .string(title.text(for: locale)) }
        if let subtitle = message.subtitle { alert["subtitle"] = .string(subtitle.text(for: locale)) }
        if let body = message.body { alert["body"] = .string(body.text(for: locale)) }
        if !alert.isEmpty { aps["alert"] = .object(alert) }
        if let badge = message.badge { aps["badge"] = .number(Double(badge)) }
        if let sound = message.sound { aps["sound"] = .string(sound) }
        if let thread = message.threadId { aps["thread-id"] = .string(thread) }
        if let category = message.category { aps["category"] = .string(category) }
        if message.contentAvailable == true { aps["content-available"] = .number(1) }
        if message.mutableContent == true { aps["mutable-content"] = .number(1) }
        var root = message.data ?? [:]
        root["aps"] = .object(aps)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes, .sortedKeys]
        bytes = (try? Array(encoder.encode(JSONValue.object(root)))) ?? Array("{\"aps\":{}}".utf8)
        pushType = Self.pushType(of: message)
        priority = message.priority ?? (pushType == .background ? 5 : 10)
        expiration = message.expiresAt
        collapseId = message.collapseId
    }

    /// `alert`, unless the message says otherwise or only wakes the app.
    static func pushType(of message: PushMessage) -> APNsPushType {
        if let type = message.pushType { return type }
        let visible = message.title != nil || message.subtitle != nil || message.body != nil || message.badge != nil || message.sound != nil
        return message.contentAvailable == true && !visible ? .background : .alert
    }

    /// Checks what APNs would refuse before anything is stored: each localization's payload within the limit, a
    /// background push at priority 5, a collapse id within 64 bytes.
    static func check(_ message: PushMessage) throws(KizunaError) {
        let type = pushType(of: message)
        let limit = limit(for: type)
        var locales: Set<String?> = [nil]
        for text in [message.title, message.subtitle, message.body].compactMap({ $0 }) { locales.formUnion(text.localized.keys.map { $0 }) }
        for locale in locales {
            let size = APNsPayload(message, locale: locale).bytes.count
            if size > limit {
                throw KizunaError(
                    .validationFailed,
                    "The notification's payload is \(size) bytes\(locale.map { " in \($0)" } ?? ""); APNs takes at most \(limit) for a \(type.rawValue) push.",
                    field: "message")
            }
        }
        if let priority = message.priority, ![1, 5, 10].contains(priority) {
            throw KizunaError(.validationFailed, "priority must be 10 (at once), 5 (when power allows) or 1 (lowest).", field: "message.priority")
        }
        if type == .background, message.priority == 10 {
            throw KizunaError(.validationFailed, "A background push must have priority 5; APNs refuses 10.", field: "message.priority")
        }
        if let collapse = message.collapseId, collapse.isEmpty || collapse.utf8.count > 64 {
            throw KizunaError(.validationFailed, "collapseId must be 1 to 64 bytes.", field: "message.collapseId")
        }
        if let badge = message.badge, badge < 0 {
            throw KizunaError(.validationFailed, "badge must be 0 or more.", field: "message.badge")
        }
        if let data = message.data, data["aps"] != nil {
            throw KizunaError(.validationFailed, "data may not hold aps: Kizuna builds it from the message.", field: "message.data")
        }
    }
}
