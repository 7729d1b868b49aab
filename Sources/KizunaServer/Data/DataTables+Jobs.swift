import KizunaCore

extension DataTables {
    /// A job a publish records, in its transaction, for work that takes time on a big table.
    package struct PlannedJob: Sendable, Equatable {
        package var model: String
        package var table: String
        package var work: DataJob.Work
    }

    /// Jobs of earlier publishes that a plan makes pointless or wrong: the kind and target (index or field) of a table,
    /// or every job of a table (`kind` and `target` `nil`) when its model is dropped.
    package struct Superseded: Sendable, Equatable {
        package var table: String
        package var kind: String?
        package var target: String?
    }

    /// The jobs that finish `plan` after its statements ran: an index on a model that already has a table, and a
    /// backfill wherever existing rows need a default the column does not give them.
    ///
    /// `ADD COLUMN … DEFAULT <constant>` fills every row at once on both engines (SQLite reads the default for rows
    /// written before; PostgreSQL 11+ stores it in the catalog), so a default with an SQL literal needs no job when
    /// the column is new. A DateTime default (stored as epoch milliseconds) or a JSON one has no literal here, and a
    /// field that becomes required keeps its column, NULLs included: those are backfilled.
    package static func jobs(for plan: SchemaPlan, app: String, schema: DataSchema, previous: DataSchema, dialect: Dialect) -> [PlannedJob] {
        var jobs: [PlannedJob] = []
        for change in plan.changes {
            let table = table(app: app, model: change.model)
            guard let model = schema.model(named: change.model) else { continue }
            switch change.action {
            case .addIndex:
                guard let name = change.index, let index = model.indexes.first(where: { $0.name == name }) else { continue }
                let work = DataJob.Work.index(index: name, name: indexName(table: table, index: name), columns: indexColumns(index))
                jobs.append(PlannedJob(model: model.name, table: table, work: work))
            case .addField:
                guard let field = change.field.flatMap(model.field(named:)), let value = field.defaultValue,
                    literal(value, for: field, dialect: dialect) == nil, let stored = storedDefault(of: field, schema: schema)
                else { continue }
                jobs.append(PlannedJob(model: model.name, table: table, work: .backfill(field: field.name, value: stored)))
            case .changeField:
                guard let field = change.field.flatMap(model.field(named:)), let value = field.defaultValue,
                    let old = previous.model(named: change.model)?.field(named: field.name), let stored = storedDefault(of: field, schema: schema)
                else { continue }
                // A column dropped and added again (its type changed) is new: as for an added field. A kept column
                // holds NULLs only where the field was optional or had no default.
                let readded = sqlType(old, dialect: dialect) != sqlType(field, dialect: dialect)
                let needed = readded ? literal(value, for: field, dialect: dialect) == nil : field.isRequired
                if needed { jobs.append(PlannedJob(model: model.name, table: table, work: .backfill(field: field.name, value: stored))) }
            default:
                continue
            }
        }
        return jobs
    }

    /// The earlier jobs `plan` cancels: those of a dropped model, of a dropped or changed field (a new backfill is
    /// planned when the field still needs one), and of a dropped index (an index whose keys changed is dropped and
    /// added again, under a new job).
    package static func superseded(by plan: SchemaPlan, app: String) -> [Superseded] {
        plan.changes.compactMap { change -> Superseded? in
            let table = table(app: app, model: change.model)
            switch change.action {
            case .dropModel: return Superseded(table: table)
            case .dropField, .changeField: return change.field.map { Superseded(table: table, kind: "backfill", target: $0) }
            case .dropIndex: return change.index.map { Superseded(table: table, kind: "index", target: $0) }
            default: return nil
            }
        }
    }

    /// A field's default as its column stores it, ready to bind; `nil` for a field without one.
    static func storedDefault(of field: DataField, schema: DataSchema) -> StoredValue? {
        guard !field.isList, let value = field.defaultValue else { return nil }
        // A JSON default is the document itself (the SDL's text parsed), never a string holding JSON.
        if case .scalar(.json) = field.type { return .json(StoredValue.jsonText(value)) }
        return try? StoredValue.convert(value, to: field.type, schema: schema).get()
    }
}
