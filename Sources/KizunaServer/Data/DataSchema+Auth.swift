import GraphQL
import KizunaCore

/// One `@auth` rule as written, before its owner field is looked up.
struct RuleDraft {
    enum Kind {
        case owner, owners, groups, signedIn, anyone
    }

    var kind: Kind
    /// The rule object, where a problem with the whole rule points.
    var node: any GraphQL.Node
    var ownerField: String?
    var ownerFieldNode: (any GraphQL.Node)?
    var groups: [String] = []
    var operations = Set(DataOperation.allCases)
    var via: String?
    var viaNode: (any GraphQL.Node)?
}

extension DataSchemaChecker {
    /// The keys an `@auth` rule object may have: Amplify's, plus Kizuna's `via`.
    private static let ruleKeys = ["allow", "ownerField", "groups", "operations", "via"]

    /// Reads every model's `@auth` rules and resolves their owner fields.
    ///
    /// Rules with `via` wait until every model's own rules are resolved, because the owner field they name on the
    /// related model may be the `owner` field that model's rules add.
    mutating func resolveRules() {
        var waiting: [(model: Int, slot: Int, rule: RuleDraft)] = []
        for index in drafts.indices {
            guard let directive = drafts[index].auth else { continue }
            let rules = readRules(directive, subject: drafts[index].name)
            drafts[index].rules = Array(repeating: nil, count: rules.count)
            for (slot, rule) in rules.enumerated() {
                if rule.via != nil {
                    waiting.append((model: index, slot: slot, rule: rule))
                } else {
                    let resolved = resolveOwnRule(rule, model: index)
                    drafts[index].rules[slot] = resolved
                }
            }
        }
        for (index, slot, rule) in waiting {
            let resolved = resolveViaRule(rule, model: index)
            drafts[index].rules[slot] = resolved
        }
    }

    /// A rule checked on the record itself. The default owner field `owner` is added when the type does not declare
    /// it, as Amplify does; any other owner field must be declared.
    private mutating func resolveOwnRule(_ rule: RuleDraft, model index: Int) -> AuthRule? {
        let name = drafts[index].name
        switch rule.kind {
        case .signedIn: return AuthRule(allow: .signedIn, operations: rule.operations)
        case .anyone: return AuthRule(allow: .anyone, operations: rule.operations)
        case .groups: return AuthRule(allow: .groups(rule.groups), operations: rule.operations)
        case .owner, .owners:
            let fieldName = rule.ownerField ?? "owner"
            if let field = drafts[index].fields.first(where: { $0.name == fieldName }) {
                return ownerRule(rule, field: field, on: name, subject: name)
            }
            guard fieldName == "owner", rule.kind == .owner else {
                problem(
                    "unknown_field",
                    "\(name): the rule's owner field \(fieldName) is not a field of \(name); declare \(fieldName): String or [String].",
                    at: rule.ownerFieldNode ?? rule.node)
                return nil
            }
            drafts[index].addsOwner = true
            return AuthRule(allow: .owner(field: "owner"), operations: rule.operations)
        }
    }

    /// A rule checked on the record a `belongsTo` relation leads to: its owner field is the related model's.
    private mutating func resolveViaRule(_ rule: RuleDraft, model index: Int) -> AuthRule? {
        let model = drafts[index]
        guard let via = rule.via else { return nil }
        guard let relation = model.relations.first(where: { $0.field == via && $0.kind == .belongsTo }),
            let target = drafts.first(where: { $0.name == relation.target })
        else {
            problem(
                "bad_via",
                "\(model.name): via: \"\(via)\" must name a @belongsTo field of \(model.name), the relation to the record the rule is checked on.",
                at: rule.viaNode ?? rule.node)
            return nil
        }
        let fieldName = rule.ownerField ?? "owner"
        guard let field = target.allFields.first(where: { $0.name == fieldName }) else {
            problem(
                "unknown_field",
                "\(model.name): the rule via \(via) looks for \(target.name).\(fieldName), which \(target.name) does not have; "
                    + "declare \(fieldName): String or [String] there.",
                at: rule.ownerFieldNode ?? rule.viaNode ?? rule.node)
            return nil
        }
        return ownerRule(rule, field: field, on: target.name, subject: model.name)
    }

    /// An owner rule over `field`: a `String` holds one owner, a `[String]` several. Amplify writes both as
    /// `allow: owner`, so a list field makes an owner rule an owners rule; `allow: owners` insists on a list.
    private mutating func ownerRule(_ rule: RuleDraft, field: DataField, on model: String, subject: String) -> AuthRule? {
        guard field.type == .scalar(.string), field.isList || rule.kind == .owner else {
            let expected = rule.kind == .owners ? "[String]" : "String or [String]"
            problem(
                "bad_owner_field", "\(subject): the owner field \(model).\(field.name) must be \(expected), not \(field.typeDescription).",
                at: rule.ownerFieldNode ?? rule.node)
            return nil
        }
        let allow: AuthRule.Allow = field.isList ? .owners(field: field.name) : .owner(field: field.name)
        return AuthRule(allow: allow, operations: rule.operations, via: rule.via)
    }

    /// Reads `@auth(rules: [...])`, one draft per rule read without a problem.
    private mutating func readRules(_ directive: GraphQL.Directive, subject: String) -> [RuleDraft] {
        let arguments = directiveArguments(of: directive, allowed: ["rules"], subject: subject)
        guard let argument = arguments["rules"] else {
            problem("missing_argument", "\(subject): @auth needs rules: [...], such as rules: [{allow: owner}].", at: directive)
            return []
        }
        guard let list = argument.value as? ListValue else {
            problem("wrong_type", "\(subject): @auth's rules must be a list of rules, not \(Self.describe(argument.value)).", at: argument.value)
            return []
        }
        if list.values.isEmpty {
            problem("empty", "\(subject): @auth(rules: []) lets nobody in, as no @auth does; add a rule or remove @auth.", at: argument.value)
        }
        return list.values.compactMap { readRule($0, subject: subject) }
    }

    private mutating func readRule(_ value: any GraphQL.Value, subject: String) -> RuleDraft? {
        guard let object = value as? ObjectValue else {
            problem("wrong_type", "\(subject): each rule is an object such as {allow: owner}, not \(Self.describe(value)).", at: value)
            return nil
        }
        let before = problems.count
        var members: [String: any GraphQL.Value] = [:]
        var names: [String: GraphQL.Name] = [:]
        for member in object.fields {
            let key = member.name.value
            guard Self.ruleKeys.contains(key) else {
                problem("unknown_argument", "\(subject): a rule has no \(key); it takes \(Self.ruleKeys.joined(separator: ", ")).", at: member.name)
                continue
            }
            guard members[key] == nil else {
                problem("duplicate_argument", "\(subject): a rule gives \(key) twice.", at: member.name)
                continue
            }
            members[key] = member.value
            names[key] = member.name
        }
        guard let allowValue = members["allow"] else {
            problem("missing_argument", "\(subject): each rule needs allow: owner, owners, groups, private or public.", at: object)
            return nil
        }
        guard let allow = symbol(allowValue, subject: subject, what: "allow") else { return nil }
        let kind: RuleDraft.Kind
        switch allow {
        case "owner": kind = .owner
        case "owners": kind = .owners
        case "groups": kind = .groups
        case "private": kind = .signedIn
        case "public": kind = .anyone
        default:
            problem("unknown_value", "\(subject): allow: \(allow) is not supported; use owner, owners, groups, private or public.", at: allowValue)
            return nil
        }
        var rule = RuleDraft(kind: kind, node: object)
        let isOwner = kind == .owner || kind == .owners
        // Each key belongs to some kinds of rule; a key on the wrong kind is a mistake the rule would silently ignore.
        for (key, applies, required) in [
            ("ownerField", isOwner, kind == .owners), ("groups", kind == .groups, kind == .groups), ("via", isOwner, false),
        ] {
            if let name = names[key], !applies {
                problem("unknown_argument", "\(subject): \(key) does not apply to an allow: \(allow) rule.", at: name)
            } else if names[key] == nil, required {
                problem("missing_argument", "\(subject): an allow: \(allow) rule needs \(key).", at: object)
            }
        }
        if isOwner, let value = members["ownerField"] {
            rule.ownerField = string(value, subject: subject, what: "ownerField")
            rule.ownerFieldNode = value
        }
        if isOwner, let value = members["via"] {
            rule.via = string(value, subject: subject, what: "via")
            rule.viaNode = value
        }
        if kind == .groups, let value = members["groups"], let groups = strings(value, subject: subject, what: "groups") {
            if groups.isEmpty || groups.contains(where: \.isEmpty) {
                problem("empty", "\(subject): groups must name at least one group, and no group is an empty name.", at: value)
            }
            rule.groups = groups
        }
        if let value = members["operations"] {
            rule.operations = operations(value, subject: subject)
        }
        return problems.count == before ? rule : nil
    }

    /// Reads `operations: [create, read, update, delete]`; Amplify's finer read operations all mean read here.
    private mutating func operations(_ value: any GraphQL.Value, subject: String) -> Set<DataOperation> {
        guard let list = value as? ListValue else {
            problem("wrong_type", "\(subject): operations must be a list such as [create, read], not \(Self.describe(value)).", at: value)
            return []
        }
        if list.values.isEmpty { problem("empty", "\(subject): operations: [] allows nothing; list at least one operation.", at: value) }
        var operations: Set<DataOperation> = []
        for element in list.values {
            guard let name = symbol(element, subject: subject, what: "an operation") else { continue }
            switch name {
            case "create": operations.insert(.create)
            case "read", "get", "list", "listen", "sync", "search": operations.insert(.read)
            case "update": operations.insert(.update)
            case "delete": operations.insert(.delete)
            default: problem("unknown_value", "\(subject): \(name) is not an operation; use create, read, update or delete.", at: element)
            }
        }
        return operations
    }
}
