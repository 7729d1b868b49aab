import Foundation
import GRDB
import KizunaCore

/// The SDK's SQLite database (`data.sqlite` in the app's directory), through GRDB: the outbox's items and the
/// offline cache's records, in one file behind one `DatabaseQueue` (two queues on one file would each think they
/// alone write it).
///
/// Opened once, on the first use by the outbox or the cache. The file follows the SDK's storage rules: its schema is versioned by
/// GRDB's migrator, each migration in one transaction (a kill mid-migration leaves the previous version), and a file a
/// newer SDK migrated further is refused (`store_too_new`) rather than read wrong.
final class LocalDatabase: Sendable {
    let url: URL
    private let opened = Locked<DatabaseQueue?>(nil)

    init(url: URL) {
        self.url = url
    }

    /// The queue, opening (creating or migrating) the file the first time.
    /// - Throws: `store_too_new` when a newer SDK wrote it; `internal_error` naming the file when it cannot be opened.
    func queue() throws(KizunaError) -> DatabaseQueue {
        try opened.withLock { (queue: inout DatabaseQueue?) throws(KizunaError) -> DatabaseQueue in
            if let queue { return queue }
            let made = try Self.open(at: url)
            queue = made
            return made
        }
    }

    /// Opens, creating or migrating, the database at `url`.
    static func open(at url: URL) throws(KizunaError) -> DatabaseQueue {
        let database: DatabaseQueue
        do {
            var configuration = Configuration()
            configuration.label = "kizuna.data"
            // Write-ahead logging: a commit is one append to the log, not a rewrite of the pages with a journal.
            // Commits wait for the disk (FULL) only where it matters (an outbox item queued survives a power cut);
            // what a kill or a power cut can only set back (an item's later states, cached records the next sync
            // fetches again) does not wait.
            configuration.prepareDatabase { db in
                try db.execute(sql: "PRAGMA journal_mode = WAL")
                try db.execute(sql: "PRAGMA synchronous = NORMAL")
            }
            database = try DatabaseQueue(path: url.path, configuration: configuration)
        } catch {
            throw KizunaError(.internalError, "The SDK's database \(url.path) could not be opened: \(error)")
        }
        let migrator = migrator
        do {
            if try database.read({ try migrator.hasBeenSuperseded($0) }) {
                throw KizunaError(
                    .storeTooNew, "\(url.path) was written by a newer version of the Kizuna SDK; this version cannot read it.")
            }
            try migrator.migrate(database)
        } catch let error as KizunaError {
            throw error
        } catch {
            throw KizunaError(.internalError, "The SDK's database \(url.path) could not be migrated: \(error)")
        }
        return database
    }

    /// The database's versions, oldest first. Add a migration for each change; never edit a released one.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("1-outbox") { db in
            try db.execute(
                sql: """
                    CREATE TABLE outbox (
                        seq INTEGER PRIMARY KEY AUTOINCREMENT,
                        id TEXT NOT NULL UNIQUE,
                        mutation TEXT NOT NULL,
                        userId TEXT,
                        state TEXT NOT NULL CHECK (state IN ('pending', 'sending', 'failed')),
                        attempts INTEGER NOT NULL DEFAULT 0,
                        error TEXT,
                        current TEXT,
                        queuedAt INTEGER NOT NULL
                    )
                    """)
        }
        migrator.registerMigration("2-records") { db in
            // The offline cache: each user's copy of the records they may read (`userId` '' for nobody signed in),
            // as JSON, with the seq of the change it reflects (never replaced by an older one) and the full sync that
            // last wrote it (a full sync drops what it did not see).
            try db.execute(
                sql: """
                    CREATE TABLE records (
                        userId TEXT NOT NULL,
                        model TEXT NOT NULL,
                        id TEXT NOT NULL,
                        record TEXT NOT NULL,
                        seq INTEGER NOT NULL,
                        generation INTEGER NOT NULL,
                        deleted INTEGER NOT NULL DEFAULT 0,
                        PRIMARY KEY (userId, model, id)
                    ) WITHOUT ROWID
                    """)
            // Where each user's copy of each model is: the fields it holds, the `lastSeq` of its last complete sync,
            // and that sync's generation.
            try db.execute(
                sql: """
                    CREATE TABLE syncs (
                        userId TEXT NOT NULL,
                        model TEXT NOT NULL,
                        fields TEXT NOT NULL,
                        lastSeq TEXT NOT NULL,
                        generation INTEGER NOT NULL,
                        PRIMARY KEY (userId, model)
                    ) WITHOUT ROWID
                    """)
        }
        migrator.registerMigration("3-full-sync-time") { db in
            // When each copy was last synced from the start (epoch milliseconds; 0: never recorded): a copy older than
            // the full-sync interval is synced from the start again, which brings in records the user was given access
            // to since (a room they joined) and drops those they lost.
            try db.execute(sql: "ALTER TABLE syncs ADD COLUMN fullSyncAt INTEGER NOT NULL DEFAULT 0")
        }
        return migrator
    }
}
