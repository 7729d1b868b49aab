import Foundation

/// A window of absolute time: from `start` (inclusive) until `end` (exclusive); either may be open.
public struct DateWindow: Sendable, Hashable {
    public let start: Date?
    public let end: Date?

    /// Creates a window.
    public init(start: Date?, end: Date?) {
        self.start = start
        self.end = end
    }

    /// Whether `date` lies in the window.
    public func contains(_ date: Date) -> Bool {
        (start.map { date >= $0 } ?? true) && (end.map { date < $0 } ?? true)
    }
}

/// A day of the week.
public enum Weekday: String, Sendable, Hashable, CaseIterable {
    case sun, mon, tue, wed, thu, fri, sat

    /// Foundation's weekday number: 1 is Sunday.
    var calendarNumber: Int { Self.allCases.firstIndex(of: self)! + 1 }
}

/// A weekly window in local time, as device-management schedules use: listed weekdays from `start` to `end`.
///
/// When `end` is not after `start`, the window runs overnight into the next day (`fri 22:00–06:00` ends on
/// Saturday morning).
public struct WeeklyWindow: Sendable, Hashable {
    public let days: Set<Weekday>
    /// Minutes after local midnight at which the window opens.
    public let startMinute: Int
    /// Minutes after local midnight at which it closes; 1440 is midnight at the end of the day.
    public let endMinute: Int
    public let calendar: Calendar

    /// Creates a window in `timeZone`.
    public init(days: Set<Weekday>, startMinute: Int, endMinute: Int, timeZone: TimeZone) {
        self.days = days
        self.startMinute = startMinute
        self.endMinute = endMinute
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        self.calendar = calendar
    }

    /// Whether `date` lies in the window.
    public func contains(_ date: Date) -> Bool {
        let parts = calendar.dateComponents([.weekday, .hour, .minute], from: date)
        guard let weekday = parts.weekday, let hour = parts.hour, let minute = parts.minute else { return false }
        let now = hour * 60 + minute
        let today = Weekday.allCases[weekday - 1]
        let yesterday = Weekday.allCases[(weekday + 5) % 7]
        if startMinute < endMinute {
            return days.contains(today) && now >= startMinute && now < endMinute
        }
        return (days.contains(today) && now >= startMinute) || (days.contains(yesterday) && now < endMinute)
    }
}

/// Parsing of the time forms conditions and policies use.
enum TimeSyntax {
    /// `Asia/Tokyo`, `UTC`, `Z`, or a fixed offset such as `+09:00`.
    static func timeZone(_ text: String) -> TimeZone? {
        if text == "Z" || text == "UTC" { return TimeZone(identifier: "UTC") }
        if let sign = text.first, sign == "+" || sign == "-" {
            let digits = text.dropFirst().split(separator: ":")
            guard digits.count == 2, let hours = Int(digits[0]), let minutes = Int(digits[1]), digits[0].count == 2,
                digits[1].count == 2, hours <= 14, minutes < 60
            else { return nil }
            return TimeZone(secondsFromGMT: (sign == "-" ? -1 : 1) * (hours * 3600 + minutes * 60))
        }
        return TimeZone(identifier: text)
    }

    /// `HH:MM`, `00:00` to `24:00`, as minutes after midnight.
    static func clockMinute(_ text: String) -> Int? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 2, parts[1].count == 2, let hour = Int(parts[0]), let minute = Int(parts[1]),
            (0...24).contains(hour), (0..<60).contains(minute), hour < 24 || minute == 0
        else { return nil }
        return hour * 60 + minute
    }

    /// `YYYY-MM-DDTHH:MM[:SS]` with an optional `Z` or `±HH:MM`; without one, `zone` gives the local time's zone.
    ///
    /// Returns `.missingZone` when the text has no offset and no zone was given.
    static func dateTime(_ text: String, zone: TimeZone?) -> Result<Date, DateTimeProblem> {
        var body = Substring(text)
        var offsetZone: TimeZone?
        if body.hasSuffix("Z") {
            offsetZone = TimeZone(identifier: "UTC")
            body = body.dropLast()
        } else if body.count > 6, let signIndex = body.index(body.endIndex, offsetBy: -6, limitedBy: body.startIndex),
            body[signIndex] == "+" || body[signIndex] == "-"
        {
            guard let zone = timeZone(String(body[signIndex...])) else { return .failure(.malformed) }
            offsetZone = zone
            body = body[..<signIndex]
        }
        let halves = body.split(separator: "T", omittingEmptySubsequences: false)
        guard halves.count == 2 else { return .failure(.malformed) }
        let date = halves[0].split(separator: "-", omittingEmptySubsequences: false)
        let time = halves[1].split(separator: ":", omittingEmptySubsequences: false)
        guard date.count == 3, date[0].count == 4, date[1].count == 2, date[2].count == 2, (2...3).contains(time.count),
            time.allSatisfy({ $0.count == 2 }),
            let year = Int(date[0]), let month = Int(date[1]), let day = Int(date[2]),
            let hour = Int(time[0]), let minute = Int(time[1])
        else { return .failure(.malformed) }
        let second = time.count == 3 ? Int(time[2]) : 0
        guard let second, (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 60 else {
            return .failure(.malformed)
        }
        guard let resolved = offsetZone ?? zone else { return .failure(.missingZone) }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = resolved
        let components = DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        guard let result = calendar.date(from: components), calendar.component(.day, from: result) == day else {
            return .failure(.malformed)
        }
        return .success(result)
    }

    enum DateTimeProblem: Error {
        case malformed, missingZone
    }
}
