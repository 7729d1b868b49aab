import KizunaCore

/// What publishing a new data schema changes, step by step, and whether any step can lose data.
///
/// Shown before a publish (a dry run lists it) and applied in its order: models are created and fields added
/// before indexes that may use them, and indexes change before the fields and models they cover are dropped. A
/// destructive plan loses data or refuses existing records, so a publish asks for it to be confirmed.
package struct SchemaPlan: Sendable, Equatable, Codable {
    /// The steps, in the order they apply.
    package var changes: [SchemaChange]
    /// Whether any step is destructive.
    package var isDestructive: Bool

    /// Computes the plan from `old` to `new`; the same two schemas always give the same plan.
    package init(from old: DataSchema, to new: DataSchema) {
        var stages = PlanStages()
        for model in new.models where old.model(named: model.name) == nil {
            let indexes = model.indexes.isEmpty ? "" : ", \(model.indexes.count) \(model.indexes.count == 1 ? "index" : "indexes")"
            let declared = model.fields.filter { !$0.isAutomatic }.count
            stages.creates.append(
                SchemaChange(action: .createModel, model: model.name, summary: "Create model \(model.name) (\(declared) declared fields\(indexes))"))
        }
        stages.enums = Self.enumChanges(from: old.enums, to: new.enums)
        for model in new.models {
            guard let before = old.model(named: model.name) else { continue }
            stages.add(Self.fieldChanges(from: before, to: model))
            if before.relations != model.relations {
                stages.links.append(
                    SchemaChange(
                        action: .changeRelations, model: model.name, summary: "Change the relations of \(model.name): \(Self.relationsSummary(model))"
                    ))
            }
            if before.rules != model.rules {
                stages.links.append(
                    SchemaChange(
                        action: .changeRules, model: model.name,
                        summary: "Change the access rules of \(model.name) (\(before.rules.count) → \(model.rules.count) rules)"))
            }
            stages.indexes += Self.indexChanges(from: before, to: model)
        }
        for model in old.models where new.model(named: model.name) == nil {
            stages.dropModels.append(
                SchemaChange(action: .dropModel, model: model.name, isDestructive: true, summary: "Drop model \(model.name) and all its records"))
        }
        changes = stages.ordered
        isDestructive = changes.contains { $0.isDestructive }
    }

    /// The fields added, changed and dropped in a model both schemas have.
    private static func fieldChanges(from old: DataModel, to new: DataModel) -> [SchemaChange] {
        var changes: [SchemaChange] = []
        for field in new.fields {
            let path = "\(new.name).\(field.name)"
            guard let before = old.field(named: field.name) else {
                changes.append(addition(of: field, path: path, model: new.name))
                continue
            }
            if let change = fieldChange(from: before, to: field, path: path, model: new.name) { changes.append(change) }
        }
        for field in old.fields where new.field(named: field.name) == nil {
            changes.append(
                SchemaChange(
                    action: .dropField, model: old.name, field: field.name, isDestructive: true,
                    summary: "Drop field \(old.name).\(field.name) and its values"))
        }
        return changes
    }

    /// A new field on an existing model: destructive only when it is required with no default, because the records
    /// already stored have no value for it.
    private static func addition(of field: DataField, path: String, model: String) -> SchemaChange {
        let type = "\(path): \(field.typeDescription)"
        if let value = field.defaultValue {
            return SchemaChange(
                action: .addField, model: model, field: field.name,
                summary: "Add \(field.isRequired ? "required" : "optional") field \(type) = \(describe(value))")
        }
        if field.isRequired, !field.isAutomatic {
            return SchemaChange(
                action: .addField, model: model, field: field.name, isDestructive: true,
                summary: "Add required field \(type) with no default; the records already stored have no value for it")
        }
        return SchemaChange(
            action: .addField, model: model, field: field.name, summary: "Add \(field.isRequired ? "required" : "optional") field \(type)")
    }

    /// A field both models have, when anything about it differs.
    private static func fieldChange(from old: DataField, to new: DataField, path: String, model: String) -> SchemaChange? {
        guard old != new else { return nil }
        var parts: [String] = []
        var isDestructive = false
        if old.type != new.type || old.isList != new.isList {
            parts.append("change \(path) from \(old.typeDescription) to \(new.typeDescription); stored values may not convert")
            isDestructive = true
        } else if old.isRequired != new.isRequired {
            if !new.isRequired {
                parts.append("make \(path) optional")
            } else if let value = new.defaultValue {
                parts.append("make \(path) required, filling records without a value with \(describe(value))")
            } else {
                parts.append("make \(path) required with no default; records without a value no longer fit")
                isDestructive = true
            }
        }
        if old.defaultValue != new.defaultValue {
            parts.append(new.defaultValue.map { "set the default of \(path) to \(describe($0))" } ?? "remove the default of \(path)")
        }
        if old.isAutomatic != new.isAutomatic {
            parts.append(new.isAutomatic ? "the server now sets \(path)" : "clients now set \(path)")
        }
        let sentence = parts.joined(separator: "; ")
        return SchemaChange(
            action: .changeField, model: model, field: new.name, isDestructive: isDestructive,
            summary: String(sentence.prefix(1)).uppercased() + String(sentence.dropFirst())
        )
    }

    /// Index changes in a model: an index whose keys changed is dropped and built again under its name. Dropping an
    /// index loses no data, so none of these is destructive.
    private static func indexChanges(from old: DataModel, to new: DataModel) -> [SchemaChange] {
        var drops: [SchemaChange] = []
        var adds: [SchemaChange] = []
        for index in old.indexes where !new.indexes.contains(index) {
            drops.append(SchemaChange(action: .dropIndex, model: old.name, index: index.name, summary: "Drop index \(old.name).\(index.name)"))
        }
        for index in new.indexes where !old.indexes.contains(index) {
            let keys = ([index.partitionKey] + index.sortKeys).joined(separator: ", ")
            adds.append(
                SchemaChange(action: .addIndex, model: new.name, index: index.name, summary: "Add index \(new.name).\(index.name) on \(keys)"))
        }
        return drops + adds
    }

    /// Enums added, removed, or whose values changed. Removing a value is destructive: records may hold it.
    private static func enumChanges(from old: [DataEnum], to new: [DataEnum]) -> [SchemaChange] {
        var changes: [SchemaChange] = []
        for enumeration in new {
            guard let before = old.first(where: { $0.name == enumeration.name }) else {
                changes.append(
                    SchemaChange(
                        action: .changeEnum, model: enumeration.name,
                        summary: "Add enum \(enumeration.name) (\(enumeration.values.joined(separator: ", ")))"))
                continue
            }
            let added = enumeration.values.filter { !before.values.contains($0) }
            let removed = before.values.filter { !enumeration.values.contains($0) }
            guard !added.isEmpty || !removed.isEmpty else { continue }
            var parts: [String] = []
            if !added.isEmpty { parts.append("add \(added.joined(separator: ", "))") }
            if !removed.isEmpty { parts.append("remove \(removed.joined(separator: ", ")); records holding them no longer fit") }
            changes.append(
                SchemaChange(
                    action: .changeEnum, model: enumeration.name, isDestructive: !removed.isEmpty,
                    summary: "Enum \(enumeration.name): \(parts.joined(separator: "; "))"))
        }
        for enumeration in old where !new.contains(where: { $0.name == enumeration.name }) {
            changes.append(SchemaChange(action: .changeEnum, model: enumeration.name, summary: "Remove enum \(enumeration.name)"))
        }
        return changes
    }

    private static func relationsSummary(_ model: DataModel) -> String {
        guard !model.relations.isEmpty else { return "none" }
        return model.relations.map { relation in
            switch relation.kind {
            case .belongsTo: "\(relation.field) belongs to \(relation.target) through \(relation.references)"
            case .hasMany: "\(relation.field) has many \(relation.target) through \(relation.target).\(relation.references)"
            }
        }.joined(separator: "; ")
    }

    /// A default as SDL would write it, for summaries.
    static func describe(_ value: JSONValue) -> String {
        switch value {
        case .string(let text): "\"\(text)\""
        case .number(let number): number == number.rounded() && abs(number) < 1e15 ? String(Int(number)) : String(number)
        case .bool(let flag): String(flag)
        case .null: "null"
        case .array(let elements): "[\(elements.map { describe($0) }.joined(separator: ", "))]"
        case .object(let members):
            "{" + members.keys.sorted().map { key in "\"\(key)\": " + describe(members[key] ?? .null) }.joined(separator: ", ") + "}"
        }
    }
}

/// One step of a ``SchemaPlan``.
package struct SchemaChange: Sendable, Equatable, Codable {
    /// What the step does.
    package enum Action: String, Codable, Sendable {
        case createModel, dropModel, addField, dropField, changeField, addIndex, dropIndex, changeEnum, changeRules, changeRelations
    }

    /// What the step does.
    package var action: Action
    /// The model it changes; for `changeEnum`, the enum.
    package var model: String
    /// The field, for field steps.
    package var field: String?
    /// The index, for index steps.
    package var index: String?
    /// Whether the step can lose data or refuse records already stored.
    package var isDestructive: Bool
    /// The step in a sentence, for people: "Add optional field Message.editedAt: DateTime".
    package var summary: String

    package init(
        action: Action, model: String, field: String? = nil, index: String? = nil, isDestructive: Bool = false, summary: String
    ) {
        self.action = action
        self.model = model
        self.field = field
        self.index = index
        self.isDestructive = isDestructive
        self.summary = summary
    }
}

/// The plan's steps sorted into the stages they apply in.
private struct PlanStages {
    var creates: [SchemaChange] = []
    var enums: [SchemaChange] = []
    var addFields: [SchemaChange] = []
    var changeFields: [SchemaChange] = []
    var links: [SchemaChange] = []
    var indexes: [SchemaChange] = []
    var dropFields: [SchemaChange] = []
    var dropModels: [SchemaChange] = []

    mutating func add(_ fieldChanges: [SchemaChange]) {
        for change in fieldChanges {
            switch change.action {
            case .addField: addFields.append(change)
            case .dropField: dropFields.append(change)
            default: changeFields.append(change)
            }
        }
    }

    /// Creates, then additions and changes, then index changes, then drops.
    var ordered: [SchemaChange] {
        [creates, enums, addFields, changeFields, links, indexes, dropFields, dropModels].flatMap { $0 }
    }
}
