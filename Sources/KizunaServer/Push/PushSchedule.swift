import Foundation
import KizunaCore

/// When a push job is sent: at one moment, or at the same wall-clock time in each device's own time zone.
struct PushSchedule: Sendable, Hashable {
    /// When the job is expanded to its devices (epoch milliseconds): its send time, or for a local-time send the first
    /// moment its wall-clock time is reached anywhere (UTC+14).
    let expandAt: Int64
    /// The wall-clock time of a local-time send, `yyyy-MM-ddTHH:mm:ss`.
    let localTime: String?
    /// The zone of devices that registered none.
    let fallbackTimeZone: String?

    /// A local-time send is reached in a device's zone at most this long before it is expanded, and may be that late.
    static let grace: Int64 = 60_000

    /// The schedule `request` asks for.
    /// - Throws: `validation_failed` naming `sendAt` or `fallbackTimeZone` when they do not read.
    static func plan(_ request: PushSendRequest, now: Int64) throws(KizunaError) -> PushSchedule {
        let zone = request.fallbackTimeZone
        if let zone, TimeZone(identifier: zone) == nil {
            throw KizunaError(
                .validationFailed, "fallbackTimeZone '\(zone)' is not an IANA time zone, such as Asia/Tokyo.", field: "fallbackTimeZone")
        }
        guard request.localTime == true else {
            guard let text = request.sendAt else { return PushSchedule(expandAt: now, localTime: nil, fallbackTimeZone: zone) }
            guard let date = WireFormat.parseDate(text) else {
                throw KizunaError(
                    .validationFailed, "sendAt must be an RFC 3339 time with its offset, such as 2026-12-01T09:00:00Z.", field: "sendAt")
            }
            return PushSchedule(expandAt: max(now, EpochMillis.from(date)), localTime: nil, fallbackTimeZone: zone)
        }
        guard let text = request.sendAt, let components = wallClock(text) else {
            throw KizunaError(
                .validationFailed, "A local-time send needs sendAt as a time without offset, such as 2026-12-01T09:00:00.", field: "sendAt")
        }
        guard let utc = instant(components, in: TimeZone(identifier: "UTC")!) else {
            throw KizunaError(.validationFailed, "sendAt '\(text)' is not a time that exists.", field: "sendAt")
        }
        guard utc + 12 * 3_600_000 >= now - grace else {
            throw KizunaError(.validationFailed, "sendAt \(text) has passed in every time zone.", field: "sendAt")
        }
        let local = String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d", components.year!, components.month!, components.day!, components.hour!,
            components.minute!, components.second ?? 0)
        return PushSchedule(expandAt: max(now, utc - 14 * 3_600_000), localTime: local, fallbackTimeZone: zone)
    }

    /// When `device` is sent to (epoch milliseconds), or `nil` when the local time has passed in its zone.
    func due(for device: PushDevice, now: Int64) -> Int64? {
        guard let localTime, let components = Self.wallClock(localTime) else { return max(expandAt, now) }
        let zone =
            device.timeZone.flatMap(TimeZone.init(identifier:)) ?? fallbackTimeZone.flatMap(TimeZone.init(identifier:)) ?? TimeZone(
                identifier: "UTC")!
        guard let due = Self.instant(components, in: zone), due >= now - Self.grace else { return nil }
        return max(due, now)
    }

    /// `yyyy-MM-ddTHH:mm[:ss]`, without offset.
    private static func wallClock(_ text: String) -> DateComponents? {
        let parts = text.split(separator: "T", omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let date = parts[0].split(separator: "-").map { Int($0) }
        let time = parts[1].split(separator: ":").map { Int($0) }
        guard date.count == 3, (2...3).contains(time.count), !date.contains(nil), !time.contains(nil) else { return nil }
        let components = DateComponents(
            year: date[0], month: date[1], day: date[2], hour: time[0], minute: time[1], second: time.count == 3 ? time[2] : 0)
        guard (1...12).contains(components.month!), (1...31).contains(components.day!), (0...23).contains(components.hour!),
            (0...59).contains(components.minute!), (0...59).contains(components.second!)
        else { return nil }
        return components
    }

    private static func instant(_ components: DateComponents, in zone: TimeZone) -> Int64? {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        guard let date = calendar.date(from: components), calendar.component(.day, from: date) == components.day else { return nil }
        return EpochMillis.from(date)
    }
}
