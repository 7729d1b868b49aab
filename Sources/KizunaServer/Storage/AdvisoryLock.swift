import SQLKit

/// The PostgreSQL advisory locks Kizuna takes, each scoped to the store's schema.
///
/// An advisory lock belongs to the whole database, not to a schema: stores sharing one database (a schema each, as
/// every PostgreSQL test has) would otherwise queue behind each other's migrations, first-token creation, app changes
/// and change-log writes, and a transaction held up in one would stall writes in all. Each lock is PostgreSQL's two-key form: the purpose, and a hash of
/// `current_schema()` (with a name after it, for locks on one object).
package enum AdvisoryLock: Int32, Sendable {
    /// Instances apply migrations in turn ("kzmg").
    case migration = 0x6B7A_6D67
    /// Only one instance creates the first admin token ("kzbt").
    case bootstrapToken = 0x6B7A_6274
    /// Change-log writers commit their sequence numbers in order ("kzch").
    case changeOrder = 0x6B7A_6368
    /// Changes to the apple-app-site-association file's inputs are checked in turn ("kzaa").
    case associationFile = 0x6B7A_6161
    /// One instance builds a given index of a data model ("kzjb"), held for the session.
    case indexBuild = 0x6B7A_6A62

    /// The lock's two keys as SQL: the purpose, and `current_schema()` (and `name`) hashed.
    package func keys(_ name: String? = nil) -> SQLQueryString {
        let object: SQLQueryString = name.map { "current_schema() || '.' || \(bind: $0)" } ?? "current_schema()"
        return "\(unsafeRaw: String(rawValue)), hashtext(\(object))"
    }

    /// Takes the lock until the end of `db`'s transaction; waits while another transaction holds it.
    package func hold(on db: any SQLDatabase, _ name: String? = nil) async throws {
        try await db.raw("SELECT pg_advisory_xact_lock(\(keys(name)))").run()
    }
}
