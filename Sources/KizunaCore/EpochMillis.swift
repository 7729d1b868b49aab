import Foundation

/// Timestamps are stored as milliseconds since 1970 in `BIGINT` columns (the same on SQLite and PostgreSQL), and
/// in the SDK's own database.
package enum EpochMillis {
    /// Now.
    package static var now: Int64 { from(.now) }

    /// The stored form of a date.
    package static func from(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }

    /// The date a stored value stands for.
    package static func date(_ millis: Int64) -> Date { Date(timeIntervalSince1970: Double(millis) / 1000) }
}
