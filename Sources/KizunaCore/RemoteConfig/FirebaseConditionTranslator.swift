/// Gives a parsed Firebase condition its Kizuna meaning: the condition's JSON form (see `Condition.parse`), or every
/// part that has no Kizuna equivalent with the reason.
///
/// A condition is translated whole or not at all: dropping one part of `a && b` would widen it, so one untranslatable
/// atom leaves the whole condition out.
package struct FirebaseConditionTranslator: Sendable {
    /// The seed given to `percent` tests written without one. Firebase draws those from one project-wide random
    /// percentile, so they share one seed here too and `percent <= 10` stays inside `percent <= 20`.
    package static let sharedPercentSeed = "firebase-percent"

    /// The Firebase app id (`1:1234:ios:abcd`) this Kizuna app stands for: `app.id == '…'` is then true for it and
    /// false for the others. Without it, `app.id` tests are not translated.
    package var firebaseAppId: String?

    package init(firebaseAppId: String? = nil) {
        self.firebaseAppId = firebaseAppId
    }

    /// What became of one condition: its Kizuna JSON, or the reasons it has none; and what the user should know.
    package struct Outcome: Sendable {
        package var condition: JSONValue?
        package var untranslated: [String] = []
        package var notes: [String] = []
    }

    /// Translates `expression`; `outcome.condition` is `nil` when any part could not be translated.
    package func translate(_ expression: FirebaseExpression) -> Outcome {
        var outcome = Outcome()
        let condition = translate(expression, &outcome)
        if outcome.untranslated.isEmpty { outcome.condition = condition }
        return outcome
    }

    private func translate(_ expression: FirebaseExpression, _ outcome: inout Outcome) -> JSONValue {
        switch expression {
        case .and(let terms): return ["all": .array(terms.map { translate($0, &outcome) })]
        case .or(let terms): return ["any": .array(terms.map { translate($0, &outcome) })]
        case .not(let term): return ["not": translate(term, &outcome)]
        case .constant(let value): return constant(value)
        case .atom(let atom):
            switch translate(atom, &outcome.notes) {
            case .success(let condition): return condition
            case .failure(let reason):
                outcome.untranslated.append("`\(atom.text)`: \(reason.text)")
                return .null
            }
        }
    }

    /// `{"all": []}` holds always, `{"any": []}` never.
    private func constant(_ value: Bool) -> JSONValue { value ? ["all": []] : ["any": []] }

    private struct Reason: Error { let text: String }

    private func translate(_ atom: FirebaseAtom, _ notes: inout [String]) -> Result<JSONValue, Reason> {
        switch atom.element {
        case "app.version": return version(atom, kind: "appVersion", &notes)
        case "app.build": return version(atom, kind: "buildNumber", &notes)
        case "device.os": return platform(atom)
        case "device.language": return locales(atom)
        case "device.country":
            guard case .infix("in", let list) = atom.test, let countries = list.strings else { return .failure(unknownTest(atom)) }
            return .success(["country": .array(countries.map { .string($0.uppercased()) })])
        case "percent": return percent(atom, &notes)
        case "dateTime", "device.dateTime": return dateTime(atom)
        case "app.userProperty", "app.customSignal": return attribute(atom, &notes)
        case "app.id": return appId(atom)
        case "app.firebaseInstallationId", "firebaseInstallationId":
            return .failure(Reason(text: "Firebase installation ids are not Kizuna install ids; list the Kizuna ones with installId"))
        case "app.audiences":
            return .failure(Reason(text: "Google Analytics audiences have no Kizuna equivalent; send what defines them as an attribute"))
        case "app.firstOpenTimestamp", "firstOpenTimestamp":
            return .failure(Reason(text: "the first-open time comes from Google Analytics; Kizuna does not know it"))
        default:
            return .failure(Reason(text: "'\(atom.element)' has no Kizuna equivalent"))
        }
    }

    private func unknownTest(_ atom: FirebaseAtom) -> Reason {
        Reason(text: "this test on \(atom.element) has no Kizuna equivalent")
    }

    /// The operator and its one operand, from `x.>=(['1'])` or `x >= '1'`.
    private func comparison(_ test: FirebaseAtom.Test) -> (String, FirebaseLiteral)? {
        let operators = ["==", "!=", "<", "<=", ">", ">="]
        switch test {
        case .infix(let op, let operand) where operators.contains(op): return (op, operand)
        case .method(let op, let operands) where operators.contains(op) && operands.count == 1: return (op, operands[0])
        default: return nil
        }
    }

    private func version(_ atom: FirebaseAtom, kind: String, _ notes: inout [String]) -> Result<JSONValue, Reason> {
        if let (op, operand) = comparison(atom.test) {
            guard let values = operand.strings ?? operand.number.map({ [Self.text($0)] }), values.count == 1 else {
                return .failure(Reason(text: "compares with one version"))
            }
            return .success([kind: [op: .string(values[0])]])
        }
        if case .method("exactlyMatches", let operands) = atom.test, let values = FirebaseLiteral.flattened(operands).strings, !values.isEmpty {
            let tests = values.map { JSONValue.object([kind: ["==": .string($0)]]) }
            notes.append(
                "`\(atom.text)` compares versions as numbers in Kizuna, not as text: '2.1' also matches '2.1.0' (missing components "
                    + "are zero)")
            return .success(tests.count == 1 ? tests[0] : ["any": .array(tests)])
        }
        if case .method(let name, _) = atom.test, ["contains", "notContains", "matches", "beginsWith", "endsWith"].contains(name) {
            return .failure(Reason(text: "Kizuna compares versions as numbers, not as text; rewrite it with <, <=, >= or >"))
        }
        return .failure(unknownTest(atom))
    }

    private func platform(_ atom: FirebaseAtom) -> Result<JSONValue, Reason> {
        let values: [String]
        let negated: Bool
        switch atom.test {
        case .infix("==", let operand), .infix("in", let operand):
            guard let names = operand.strings else { return .failure(unknownTest(atom)) }
            (values, negated) = (names, false)
        case .infix("!=", let operand):
            guard let names = operand.strings else { return .failure(unknownTest(atom)) }
            (values, negated) = (names, true)
        default: return .failure(unknownTest(atom))
        }
        let platforms = values.map { $0.lowercased() }
        if let other = platforms.first(where: { Platform(rawValue: $0) == nil }) {
            return .failure(Reason(text: "'\(other)' is not a Kizuna platform"))
        }
        let condition: JSONValue = ["platform": .array(platforms.map(JSONValue.string))]
        return .success(negated ? ["not": condition] : condition)
    }

    /// `device.language in ['ja', 'en_US']`: bare languages as `language`, others as `locale` tags (`en-US`).
    private func locales(_ atom: FirebaseAtom) -> Result<JSONValue, Reason> {
        guard case .infix(let op, let operand) = atom.test, op == "in" || op == "==", let values = operand.strings else {
            return .failure(unknownTest(atom))
        }
        let tags = values.map { LocaleTag($0).description }
        if tags.allSatisfy({ !$0.contains("-") }) { return .success(["language": .array(tags.map(JSONValue.string))]) }
        return .success(["locale": .array(tags.map(JSONValue.string))])
    }

    private func percent(_ atom: FirebaseAtom, _ notes: inout [String]) -> Result<JSONValue, Reason> {
        let seed: String
        if let arguments = atom.arguments {
            guard arguments.count == 1, case .string(let given) = arguments[0], !given.isEmpty else {
                return .failure(Reason(text: "percent takes one quoted seed"))
            }
            seed = given
        } else {
            seed = Self.sharedPercentSeed
        }
        var range: (from: Double, to: Double)
        switch atom.test {
        case .between(let low, let high):
            guard let from = low.number, let to = high.number else { return .failure(unknownTest(atom)) }
            range = (from, to)
        case .infix(let op, let operand) where ["<", "<="].contains(op):
            guard let to = operand.number else { return .failure(unknownTest(atom)) }
            range = (0, to)
        case .infix(let op, let operand) where [">", ">="].contains(op):
            guard let from = operand.number else { return .failure(unknownTest(atom)) }
            range = (from, 100)
        default: return .failure(unknownTest(atom))
        }
        notes.append(
            "`\(atom.text)` became a Kizuna percentage with seed '\(seed)': devices are assigned new buckets, "
                + "since Firebase's own hash cannot be reproduced")
        return .success(["percent": ["seed": .string(seed), "from": .number(range.from), "to": .number(range.to)]])
    }

    /// `dateTime >= dateTime('2026-12-01T00:00:00', 'Asia/Tokyo')`: `>`/`>=` open a window, `<`/`<=` close it
    /// (Kizuna's windows include their start and exclude their end; the difference is under a second).
    private func dateTime(_ atom: FirebaseAtom) -> Result<JSONValue, Reason> {
        guard let (op, operand) = comparison(atom.test), op != "==", op != "!=" else { return .failure(unknownTest(atom)) }
        let arguments: [FirebaseLiteral]
        switch operand {
        case .call("dateTime", let given), .list(let given): arguments = given
        case .string: arguments = [operand]
        default: return .failure(unknownTest(atom))
        }
        guard let parts = FirebaseLiteral.flattened(arguments).strings, (1...2).contains(parts.count) else { return .failure(unknownTest(atom)) }
        var window: [String: JSONValue] = [(op.hasPrefix(">") ? "from" : "until"): .string(parts[0])]
        if parts.count == 2 {
            window["timeZone"] = .string(parts[1])
        } else if !parts[0].hasSuffix("Z"), !parts[0].dropFirst(10).contains(where: { $0 == "+" || $0 == "-" }) {
            return .failure(
                Reason(text: "it compares with the device's own time zone; Kizuna needs a fixed one, such as dateTime('…', 'Asia/Tokyo')"))
        }
        return .success(["dateTime": .object(window)])
    }

    /// `app.userProperty['plan'].exactlyMatches(['pro'])` or `app.userProperty['age'] >= 18`: a custom attribute.
    private func attribute(_ atom: FirebaseAtom, _ notes: inout [String]) -> Result<JSONValue, Reason> {
        guard let name = atom.key else { return .failure(Reason(text: "names no property in brackets")) }
        let test: JSONValue
        if let (op, operand) = comparison(atom.test) {
            switch operand {
            case .number(let number): test = ["number": [op: .number(number)]]
            case .string(let text) where op == "==" || op == "!=": test = ["string": [op: .string(text)]]
            default: return .failure(unknownTest(atom))
            }
        } else if case .method("exactlyMatches", let operands) = atom.test, let values = FirebaseLiteral.flattened(operands).strings, !values.isEmpty
        {
            let tests = values.map { JSONValue.object(["attribute": ["name": .string(name), "string": ["==": .string($0)]]]) }
            notes.append(attributeNote(name, atom))
            return .success(tests.count == 1 ? tests[0] : ["any": .array(tests)])
        } else if case .method(let method, _) = atom.test, ["contains", "notContains", "matches", "beginsWith", "endsWith"].contains(method) {
            return .failure(Reason(text: "Kizuna compares attributes whole (==, !=, <, …); '\(method)' has no equivalent"))
        } else {
            return .failure(unknownTest(atom))
        }
        notes.append(attributeNote(name, atom))
        return .success(["attribute": .object(["name": .string(name)].merging(test.objectValue ?? [:]) { first, _ in first })])
    }

    private func attributeNote(_ name: String, _ atom: FirebaseAtom) -> String {
        "`\(atom.text)` became a test of the attribute '\(name)': the app must send it in its device context"
    }

    private func appId(_ atom: FirebaseAtom) -> Result<JSONValue, Reason> {
        guard let firebaseAppId else {
            return .failure(Reason(text: "a Firebase app id; give --firebase-app-id to say which Firebase app this Kizuna app is"))
        }
        switch atom.test {
        case .infix("==", let operand), .infix("in", let operand):
            guard let ids = operand.strings else { return .failure(unknownTest(atom)) }
            return .success(constant(ids.contains(firebaseAppId)))
        case .infix("!=", let operand):
            guard let ids = operand.strings else { return .failure(unknownTest(atom)) }
            return .success(constant(!ids.contains(firebaseAppId)))
        default: return .failure(unknownTest(atom))
        }
    }

    /// A number as a version is written: `3`, not `3.0`.
    private static func text(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int(number)) : String(number)
    }
}
