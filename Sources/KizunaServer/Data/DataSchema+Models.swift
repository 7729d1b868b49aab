import GraphQL
import KizunaCore

/// A model while it is being read: what its own type says, before relations, rules and indexes are resolved.
struct ModelDraft {
    var name: String
    /// The declared stored fields, in order, without the automatic ones.
    var fields: [DataField] = []
    /// The relation fields, in order, as written.
    var relationFields: [RelationDraft] = []
    /// Each `@index` with the field carrying it, checked once every field is known.
    var indexDirectives: [(field: String, directive: GraphQL.Directive)] = []
    /// The type's `@auth`, read once relations are known (a rule's `via` follows one).
    var auth: GraphQL.Directive?
    /// Whether an owner rule uses the default field `owner` and the type does not declare it.
    var addsOwner = false
    var relations: [DataRelation] = []
    /// One slot per rule read, filled as each resolves (rules with `via` wait for every model's fields).
    var rules: [AuthRule?] = []
    var indexes: [DataIndex] = []

    /// Every stored field in the model's order: `id`, the declared ones, the timestamps, an added owner, `_version`.
    var allFields: [DataField] {
        var all = [DataField.id]
        all += fields
        all += [DataField.createdAt, DataField.updatedAt]
        if addsOwner { all.append(DataField.owner) }
        all.append(DataField.version)
        return all
    }

    /// The finished model.
    var model: DataModel {
        DataModel(name: name, fields: allFields, indexes: indexes, relations: relations, rules: rules.compactMap { $0 })
    }
}

/// A relation field as written, resolved once every model's fields are known.
struct RelationDraft {
    var field: String
    var kind: DataRelation.Kind
    var target: String
    var directive: GraphQL.Directive
}

/// A field's type as written, resolved against the declared names.
struct TypeReference {
    enum Resolved: Equatable {
        case stored(FieldType)
        /// A `@model` type: the field is a relation.
        case model(String)
    }

    var resolved: Resolved
    var isList: Bool
    var isRequired: Bool
}

extension DataSchemaChecker {
    /// Reads a `@model` type's directives and fields.
    mutating func readModel(_ object: ObjectTypeDefinition) -> ModelDraft {
        let name = object.name.value
        var draft = ModelDraft(name: name)
        var sawModel = false
        for directive in object.directives {
            switch directive.name.value {
            case "model":
                if sawModel { problem("duplicate_directive", "\(name): @model appears twice.", at: directive) }
                sawModel = true
                _ = directiveArguments(of: directive, allowed: [], subject: name)
            case "auth":
                guard draft.auth == nil else {
                    problem("duplicate_directive", "\(name): @auth appears twice; list every rule in one @auth.", at: directive)
                    continue
                }
                draft.auth = directive
            default:
                problem("unknown_directive", "\(name): @\(directive.name.value) is not supported on a type; use @model and @auth.", at: directive)
            }
        }
        if let interface = object.interfaces.first {
            problem("unsupported", "\(name): interfaces are not supported; declare the fields on the model.", at: interface)
        }
        if object.fields.count > Self.maximumFields {
            problem(
                "too_many_fields", "\(name) declares \(object.fields.count) fields; a model holds at most \(Self.maximumFields).", at: object.name)
        }
        var seen: Set<String> = []
        for field in object.fields {
            guard seen.insert(field.name.value).inserted else {
                problem("duplicate_field", "\(name).\(field.name.value) is declared twice.", at: field.name)
                continue
            }
            readField(field, into: &draft)
        }
        return draft
    }

    private mutating func readField(_ field: FieldDefinition, into draft: inout ModelDraft) {
        let name = field.name.value
        let subject = "\(draft.name).\(name)"
        guard checkName(field.name, subject: subject, maximumLength: Self.maximumFieldNameLength) else { return }
        if let argument = field.arguments.first {
            problem("unsupported", "\(subject): fields take no arguments.", at: argument)
        }
        guard let reference = typeReference(field.type, subject: subject) else { return }
        switch (name, reference.resolved) {
        case ("id", _), ("createdAt", _), ("updatedAt", _):
            checkAutomatic(field, reference, subject: subject)
        case (_, .model(let target)):
            if let relation = readRelation(field, target: target, reference, subject: subject) { draft.relationFields.append(relation) }
        case (_, .stored(let type)):
            var stored = DataField(name: name, type: type, isList: reference.isList, isRequired: reference.isRequired)
            var sawDefault = false
            for directive in field.directives {
                switch directive.name.value {
                case "index":
                    draft.indexDirectives.append((field: name, directive: directive))
                case "default":
                    if sawDefault { problem("duplicate_directive", "\(subject): @default appears twice.", at: directive) }
                    sawDefault = true
                    stored.defaultValue = defaultValue(directive, for: stored, subject: subject)
                case "belongsTo", "hasMany":
                    problem(
                        "bad_relation",
                        "\(subject): @\(directive.name.value) needs a field whose type is a @model type, not \(stored.typeDescription).",
                        at: directive)
                default:
                    problem(
                        "unknown_directive",
                        "\(subject): @\(directive.name.value) is not supported on a field; use @index, @default, @belongsTo or @hasMany.",
                        at: directive)
                }
            }
            draft.fields.append(stored)
        }
    }

    /// Resolves a field's type: one optional level of list, named types that exist, `@model` types for relations.
    private mutating func typeReference(_ type: any GraphQL.Node, subject: String) -> TypeReference? {
        var node = type
        var lists = 0
        while true {
            if let nonNull = node as? NonNullType {
                node = nonNull.type
            } else if let list = node as? ListType {
                lists += 1
                node = list.type
            } else {
                break
            }
        }
        guard let named = node as? NamedType else { return nil }
        if lists > 1 {
            problem("list_of_lists", "\(subject): lists of lists are not supported; use JSON for nested data.", at: type)
            return nil
        }
        let name = named.name.value
        let resolved: TypeReference.Resolved
        if let scalar = ScalarType(sdlName: name) {
            resolved = .stored(.scalar(scalar))
        } else {
            switch declared[name] {
            case .enumeration: resolved = .stored(.enumeration(name))
            case .model: resolved = .model(name)
            case .plainObject:
                problem("not_a_model", "\(subject): \(name) has no @model; only @model types are supported for now.", at: named)
                return nil
            case nil:
                let known = ScalarType.sdlNames.joined(separator: ", ")
                problem("unknown_type", "\(subject): there is no type \(name); use a @model type, an enum, or one of \(known).", at: named)
                return nil
            }
        }
        return TypeReference(resolved: resolved, isList: lists == 1, isRequired: type is NonNullType)
    }

    /// `id`, `createdAt` and `updatedAt` may be declared, as Amplify schemas do, but the server sets them, so they
    /// must have the server's type and take no directives; they end up the same as when left out.
    private mutating func checkAutomatic(_ field: FieldDefinition, _ reference: TypeReference, subject: String) {
        if field.name.value == "id" {
            if reference.resolved != .stored(.scalar(.id)) || reference.isList || !reference.isRequired {
                problem("bad_id", "\(subject) must be declared exactly as ID!, or left out; the server assigns it.", at: field.type)
            }
        } else if reference.resolved != .stored(.scalar(.dateTime)) || reference.isList {
            problem("wrong_type", "\(subject) must be DateTime or AWSDateTime, or left out; the server sets it.", at: field.type)
        }
        for directive in field.directives {
            problem("automatic_field", "\(subject) is set by the server and takes no directives; remove @\(directive.name.value).", at: directive)
        }
    }

    /// Reads a field whose type is a model: it needs exactly one of `@belongsTo` (single) or `@hasMany` (list).
    private mutating func readRelation(_ field: FieldDefinition, target: String, _ reference: TypeReference, subject: String) -> RelationDraft? {
        var relation: RelationDraft?
        for directive in field.directives {
            let directiveName = directive.name.value
            switch directiveName {
            case "belongsTo", "hasMany":
                guard relation == nil else {
                    problem("duplicate_directive", "\(subject) has more than one relation directive; keep one.", at: directive)
                    continue
                }
                let kind: DataRelation.Kind = directiveName == "belongsTo" ? .belongsTo : .hasMany
                if kind == .belongsTo, reference.isList {
                    problem("bad_relation", "\(subject): @belongsTo needs a single \(target), not a list; a list is @hasMany.", at: directive)
                } else if kind == .hasMany, !reference.isList {
                    problem("bad_relation", "\(subject): @hasMany needs a list, [\(target)]; a single \(target) is @belongsTo.", at: directive)
                }
                relation = RelationDraft(field: field.name.value, kind: kind, target: target, directive: directive)
            case "index", "default":
                problem(
                    "not_stored", "\(subject) is a relation, not a stored field; put @\(directiveName) on a stored field such as its id field.",
                    at: directive)
            default:
                problem(
                    "unknown_directive", "\(subject): @\(directiveName) is not supported on a relation field; use @belongsTo or @hasMany.",
                    at: directive)
            }
        }
        guard let relation else {
            problem(
                "relation_required", "\(subject) refers to the model \(target); add @belongsTo or @hasMany to say how they relate.", at: field.name)
            return nil
        }
        return relation
    }
}
