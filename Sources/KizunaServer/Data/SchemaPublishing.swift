import KizunaCore
import SQLKit

/// What publishing a data schema does besides recording it: the plan against the live version, refused when it is
/// destructive unless the publish allows that, and the tables changed in the publish's own transaction, so the
/// schema that is live and the tables that hold its models never disagree, whatever stops the server. What would
/// hold a big table for long (an index build, filling a default in) is recorded in that transaction as a job and
/// done by ``DataJobRunner`` in steps that each commit; until then the API answers the same (a read of a field
/// still to be filled returns its default).
package enum SchemaPublishing {
    /// The schema `document` declares, and the plan from the schema in `replaced` to it.
    /// - Throws: `validation_failed` listing every problem of the new SDL.
    package static func plan(
        from replaced: JSONValue, to document: JSONValue
    ) throws(KizunaError) -> (
        schema: DataSchema, previous: DataSchema, plan: SchemaPlan
    ) {
        let schema = try DataSchema(sdl: try SchemaDocument.sdl(in: document))
        let previous: DataSchema
        do {
            previous = try DataSchema(sdl: try SchemaDocument.sdl(in: replaced))
        } catch {
            // It was valid when it was published; a parser that changed since must not make it unreplaceable.
            throw KizunaError(
                .internalError, "The live data schema no longer parses: \(error.message) Publish with allowDestructive to replace it.")
        }
        return (schema, previous, SchemaPlan(from: previous, to: schema))
    }

    /// Throws `destructive_change` listing every destructive change of `plan`, unless `allowed`.
    package static func check(_ plan: SchemaPlan, allowDestructive allowed: Bool) throws(KizunaError) {
        let destructive = plan.changes.filter(\.isDestructive)
        guard !allowed, !destructive.isEmpty else { return }
        throw KizunaError(
            .destructiveChange,
            "Publishing this schema would drop or narrow stored data (\(destructive.count) change\(destructive.count == 1 ? "" : "s")); "
                + "publish with allowDestructive to do it anyway.",
            field: "sdl",
            details: destructive.map {
                KizunaError.Detail(
                    code: $0.action.rawValue, message: $0.summary, field: [$0.model, $0.field ?? $0.index].compactMap { $0 }.joined(separator: "."))
            }
        )
    }

    /// The publish effect of a schema document: plan against the version it replaces (read inside the publish's
    /// transaction, so a racing publish cannot slip between plan and change), refuse what is not allowed, run the
    /// instant DDL, and record as jobs for ``DataJobRunner`` what takes time on a big table (an index on an existing
    /// model, a default to fill into existing records), cancelling earlier jobs the plan makes pointless.
    package static func effect(of document: JSONValue, app: String, allowDestructive: Bool) -> PublishEffect {
        { replaced, version, db in
            let (schema, previous, plan) = try plan(from: replaced, to: document)
            try check(plan, allowDestructive: allowDestructive)
            let dialect = DataTables.Dialect(db)
            let statements = DataTables.statements(for: plan, app: app, schema: schema, previous: previous, dialect: dialect)
            do {
                // On PostgreSQL, DDL waits for the queries on its table (and an index build), and every later query
                // waits behind it: a publish that cannot have its tables in seconds gives up rather than stall the API.
                let bounded = dialect == .postgres && !statements.isEmpty
                if bounded { try await db.raw("SET LOCAL lock_timeout = '5s'").run() }
                for statement in statements { try await db.raw("\(unsafeRaw: statement)").run() }
                if bounded { try await db.raw("SET LOCAL lock_timeout TO DEFAULT").run() }  // the rest of the publish as before
            } catch let error where StoreFailure.isLockConflict(error) {
                throw KizunaError(
                    .conflict,
                    "The app's tables are busy (an index build or a long query holds them); nothing was published. Publish again in a few "
                        + "seconds; `kizuna schema jobs` shows the builds under way.",
                    retryAfter: 5)
            }
            // After the DDL, as a backfill batch does (its table, then its job row), so the two never wait on each other.
            try await DataJobQueue.cancel(DataTables.superseded(by: plan, app: app), app: app, version: version, on: db)
            let jobs = DataTables.jobs(for: plan, app: app, schema: schema, previous: previous, dialect: dialect)
            try await DataJobQueue.record(jobs, app: app, version: version, on: db)
        }
    }

    /// A change as the admin API lists it.
    package static func info(_ change: SchemaChange) -> SchemaChangeInfo {
        SchemaChangeInfo(
            action: change.action.rawValue, model: change.model, field: change.field, index: change.index, destructive: change.isDestructive,
            summary: change.summary)
    }
}
