import GraphQL
import KizunaCore

extension DataSchemaChecker {
    /// Resolves every relation field to the id field that links the two models.
    ///
    /// `belongsTo` relations go first, because a `hasMany` without `references` follows the target's `belongsTo`
    /// back to this model, as Amplify does.
    mutating func resolveRelations() {
        for index in drafts.indices {
            let draft = drafts[index]
            for relation in draft.relationFields where relation.kind == .belongsTo {
                if let resolved = resolveBelongsTo(relation, of: draft) { drafts[index].relations.append(resolved) }
            }
        }
        for index in drafts.indices {
            let draft = drafts[index]
            for relation in draft.relationFields where relation.kind == .hasMany {
                if let resolved = resolveHasMany(relation, of: draft) { drafts[index].relations.append(resolved) }
            }
            // Back into declaration order.
            let order = draft.relationFields.map(\.field)
            drafts[index].relations.sort { (order.firstIndex(of: $0.field) ?? 0) < (order.firstIndex(of: $1.field) ?? 0) }
        }
    }

    /// `room: Room @belongsTo(references: ["roomId"])`: `roomId` (by default `<field>Id`) is an `ID` on this model.
    private mutating func resolveBelongsTo(_ relation: RelationDraft, of draft: ModelDraft) -> DataRelation? {
        let subject = "\(draft.name).\(relation.field)"
        guard let found = references(of: relation, subject: subject) else { return nil }
        let explicit = found.name
        let node = found.node
        let name = explicit ?? relation.field + "Id"
        guard let field = draft.fields.first(where: { $0.name == name }) else {
            let hint = explicit == nil ? "declare \(name): ID, or name the field with references: [\"…\"]" : "declare it as ID or ID!"
            problem(
                "unknown_field",
                "\(subject): @belongsTo needs \(draft.name).\(name) to hold the \(relation.target)'s id, but there is none; \(hint).",
                at: node)
            return nil
        }
        guard field.type == .scalar(.id), !field.isList else {
            problem(
                "wrong_type",
                "\(subject): \(draft.name).\(name) holds the \(relation.target)'s id, so it must be ID or ID!, not \(field.typeDescription).",
                at: node)
            return nil
        }
        return DataRelation(field: relation.field, kind: .belongsTo, target: relation.target, references: name)
    }

    /// `messages: [Message] @hasMany(references: ["roomId"])`: `roomId` is an `ID` on the target. Without
    /// `references` it is the field of the target's one `belongsTo` back to this model, else `<model>Id`.
    private mutating func resolveHasMany(_ relation: RelationDraft, of draft: ModelDraft) -> DataRelation? {
        let subject = "\(draft.name).\(relation.field)"
        guard let found = references(of: relation, subject: subject),
            let target = drafts.first(where: { $0.name == relation.target })
        else { return nil }
        let explicit = found.name
        let node = found.node
        let name: String
        if let explicit {
            name = explicit
        } else {
            let back = target.relations.filter { $0.kind == .belongsTo && $0.target == draft.name }
            guard back.count <= 1 else {
                let fields = back.map(\.field).joined(separator: ", ")
                problem(
                    "ambiguous_relation",
                    "\(subject): \(target.name) has several @belongsTo fields back to \(draft.name) (\(fields)); "
                        + "say which with references: [\"…\"].",
                    at: node)
                return nil
            }
            name = back.first?.references ?? Self.lowercasingFirst(draft.name) + "Id"
        }
        guard let field = target.fields.first(where: { $0.name == name }) else {
            problem(
                "unknown_field",
                "\(subject): @hasMany needs \(target.name).\(name) to hold the \(draft.name)'s id, but there is none; "
                    + "declare \(name): ID on \(target.name).",
                at: node)
            return nil
        }
        guard field.type == .scalar(.id), !field.isList else {
            problem(
                "wrong_type",
                "\(subject): \(target.name).\(name) holds the \(draft.name)'s id, so it must be ID or ID!, not \(field.typeDescription).",
                at: node)
            return nil
        }
        return DataRelation(field: relation.field, kind: .hasMany, target: relation.target, references: name)
    }

    /// The one field a relation directive's `references` names (`nil` when it has none) and the node to blame for a
    /// wrong one; `nil` after a problem. Kizuna ids are one column, so a composite key is refused.
    private mutating func references(of relation: RelationDraft, subject: String) -> References? {
        let before = problems.count
        let arguments = directiveArguments(of: relation.directive, allowed: ["references"], subject: subject)
        guard problems.count == before else { return nil }
        guard let argument = arguments["references"] else { return References(name: nil, node: relation.directive) }
        guard let names = strings(argument.value, subject: subject, what: "references") else { return nil }
        guard names.count == 1 else {
            problem("unsupported", "\(subject): references names one id field; composite keys are not supported.", at: argument.value)
            return nil
        }
        return References(name: names[0], node: argument.value)
    }

    /// Checks each `@index` against the model's final fields, the automatic ones included (`createdAt` is the usual
    /// sort key).
    mutating func resolveIndexes() {
        for index in drafts.indices {
            let draft = drafts[index]
            let fields = draft.allFields
            var names: Set<String> = []
            for (fieldName, directive) in draft.indexDirectives {
                let subject = "\(draft.name).\(fieldName)"
                let before = problems.count
                let arguments = directiveArguments(of: directive, allowed: ["name", "sortKeyFields"], subject: subject)
                // Amplify names an index when the SDL does not; `by<Field>` reads the way people name them.
                var name = "by" + Self.uppercasingFirst(fieldName)
                if let argument = arguments["name"], let given = string(argument.value, subject: subject, what: "the index name") {
                    name = given
                    if !Self.isName(given) || given.count > Self.maximumFieldNameLength {
                        problem(
                            "bad_name",
                            "\(subject): the index name \"\(given)\" must be letters, digits and _, not starting with a digit, "
                                + "at most \(Self.maximumFieldNameLength) characters.",
                            at: argument.value)
                    }
                }
                if !names.insert(name).inserted {
                    if let value = arguments["name"]?.value {
                        problem("duplicate_index", "\(draft.name) has two indexes named \(name).", at: value)
                    } else {
                        problem("duplicate_index", "\(draft.name) has two indexes named \(name).", at: directive)
                    }
                }
                if let field = fields.first(where: { $0.name == fieldName }), !Self.isIndexable(field) {
                    problem(
                        "wrong_type", "\(subject): an index key must be a single scalar or enum value, not \(field.typeDescription).", at: directive)
                }
                var sortKeys: [String] = []
                if let argument = arguments["sortKeyFields"], let keys = strings(argument.value, subject: subject, what: "sortKeyFields") {
                    sortKeys = keys
                    checkSortKeys(keys, of: draft.name, partitionKey: fieldName, fields: fields, at: argument.value, subject: subject)
                }
                if problems.count == before {
                    drafts[index].indexes.append(DataIndex(name: name, partitionKey: fieldName, sortKeys: sortKeys))
                }
            }
        }
    }

    private mutating func checkSortKeys(
        _ keys: [String], of model: String, partitionKey: String, fields: [DataField], at node: any GraphQL.Node, subject: String
    ) {
        var seen: Set<String> = [partitionKey]
        for key in keys {
            guard let field = fields.first(where: { $0.name == key }) else {
                problem("unknown_field", "\(subject): the sort key \(key) is not a stored field of \(model).", at: node)
                continue
            }
            if !Self.isIndexable(field) {
                problem(
                    "wrong_type", "\(subject): the sort key \(key) must be a single scalar or enum value, not \(field.typeDescription).", at: node)
            }
            if !seen.insert(key).inserted {
                problem("duplicate_field", "\(subject): \(key) appears twice among the index's keys.", at: node)
            }
        }
    }

    /// Whether a field can be an index key: one value that orders (a list or a JSON document does not).
    static func isIndexable(_ field: DataField) -> Bool {
        !field.isList && field.type != .scalar(.json)
    }

    /// Whether `text` is a GraphQL name: `[_A-Za-z][_0-9A-Za-z]*`.
    static func isName(_ text: String) -> Bool {
        guard let first = text.first, first == "_" || (first.isASCII && first.isLetter) else { return false }
        return text.allSatisfy { $0 == "_" || ($0.isASCII && ($0.isLetter || $0.isNumber)) }
    }

    /// `Room` → `room`, for the default id field `roomId`.
    static func lowercasingFirst(_ name: String) -> String {
        String(name.prefix(1)).lowercased() + String(name.dropFirst())
    }

    /// `roomId` → `RoomId`, for the default index name `byRoomId`.
    static func uppercasingFirst(_ name: String) -> String {
        String(name.prefix(1)).uppercased() + String(name.dropFirst())
    }
}

/// The field a relation's `references` names, and where to point when it is wrong.
private struct References {
    var name: String?
    var node: any GraphQL.Node
}
