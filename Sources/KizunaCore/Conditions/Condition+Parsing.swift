import Foundation

extension Condition {
    /// The deepest nesting of `all`/`any`/`not` accepted, to keep evaluation's stack bounded.
    public static let maximumDepth = 64

    /// The keys a condition object may have; exactly one per object.
    public static let kinds: [String] = [
        "all", "any", "not", "appVersion", "buildNumber", "osVersion", "platform", "appId", "locale", "language",
        "country", "installId", "percent", "attribute", "dateTime", "weekly",
    ]

    /// Reads a condition from its JSON form, recording every problem in `reader` with the path of its node.
    ///
    /// The forms, one key per object:
    /// - `{"all": [c…]}`, `{"any": [c…]}`, `{"not": c}`;
    /// - `{"appVersion": {">=": "3.0", "<": "4.0"}}` — every comparison must hold, so two make a range; the
    ///   same for `buildNumber` and `osVersion`; operators `== != < <= > >=`;
    /// - `{"platform": ["ios"]}`, and lists for `appId`, `locale`, `language`, `country`, `installId`;
    /// - `{"percent": {"seed": "new-ui", "from": 0, "to": 25}}` — sticky per install, 0.01 resolution;
    /// - `{"attribute": {"name": "plan", "string": {"==": "pro"}}}` with `string`, `number`, `bool` or `version`;
    /// - `{"dateTime": {"from": "2026-12-01T09:00", "until": "2026-12-24T00:00", "timeZone": "Asia/Tokyo"}}`;
    /// - `{"weekly": {"days": ["sat", "sun"], "from": "22:00", "until": "06:00", "timeZone": "+09:00"}}`.
    ///
    /// - Returns: The condition, or `nil` when a problem was recorded.
    package static func parse(_ value: JSONValue, at path: JSONPath, reader: inout DocumentReader, depth: Int = 0) -> Condition? {
        guard depth < maximumDepth else {
            reader.problem(path, "nests deeper than \(maximumDepth) levels", code: "too_deep")
            return nil
        }
        guard let object = reader.object(value, at: path) else { return nil }
        guard object.count == 1, let (kind, operand) = object.first else {
            let found = object.isEmpty ? "none" : object.keys.sorted().joined(separator: ", ")
            reader.problem(path, "must have exactly one of \(kinds.joined(separator: ", ")); found \(found)")
            return nil
        }
        let at = path[kind]
        switch kind {
        case "all", "any":
            guard let elements = reader.array(operand, at: at) else { return nil }
            let parsed = elements.enumerated().map { parse($1, at: at[$0], reader: &reader, depth: depth + 1) }
            guard parsed.allSatisfy({ $0 != nil }) else { return nil }
            return kind == "all" ? .all(parsed.compactMap { $0 }) : .any(parsed.compactMap { $0 })
        case "not":
            return parse(operand, at: at, reader: &reader, depth: depth + 1).map(Condition.not)
        case "appVersion":
            return comparison(operand, at: at, reader: &reader) { $0.parse($1, at: $2, SemanticVersion.init(parsing:)) }.map(Condition.appVersion)
        case "osVersion":
            return comparison(operand, at: at, reader: &reader) { $0.parse($1, at: $2, SemanticVersion.init(parsing:)) }.map(Condition.osVersion)
        case "buildNumber":
            return comparison(operand, at: at, reader: &reader) { $0.parse($1, at: $2, BuildNumber.init(parsing:)) }.map(Condition.buildNumber)
        case "platform":
            guard let names = reader.strings(operand, at: at) else { return nil }
            var platforms: Set<Platform> = []
            for (index, name) in names.enumerated() {
                guard let platform = Platform(rawValue: name) else {
                    let known = Platform.allCases.map(\.rawValue).joined(separator: ", ")
                    reader.problem(at[index], "\"\(name)\" is not a platform; expected one of \(known)")
                    return nil
                }
                platforms.insert(platform)
            }
            return .platform(platforms)
        case "appId", "installId":
            guard let ids = reader.strings(operand, at: at) else { return nil }
            return kind == "appId" ? .appId(Set(ids)) : .installId(Set(ids))
        case "locale":
            return reader.strings(operand, at: at).map { .locale($0.map(LocaleTag.init)) }
        case "language":
            return reader.strings(operand, at: at).map { .language(Set($0.map { $0.lowercased() })) }
        case "country":
            return reader.strings(operand, at: at).map { .country(Set($0.map { $0.uppercased() })) }
        case "percent":
            return percent(operand, at: at, reader: &reader).map(Condition.percent)
        case "attribute":
            return attribute(operand, at: at, reader: &reader)
        case "dateTime":
            return dateWindow(operand, at: at, reader: &reader).map(Condition.dateTime)
        case "weekly":
            return weeklyWindow(operand, at: at, reader: &reader).map(Condition.weekly)
        default:
            reader.problem(at, "is not a kind of condition; expected one of \(kinds.joined(separator: ", "))")
            return nil
        }
    }

    /// `{"<op>": operand, …}`: at least one operator, each operand read by `operand`.
    package static func comparison<Value>(
        _ value: JSONValue,
        at path: JSONPath,
        reader: inout DocumentReader,
        operators: [Comparison<Value>.Operator] = Comparison<Value>.Operator.allCases,
        operand: (inout DocumentReader, JSONValue, JSONPath) -> Value?
    ) -> Comparison<Value>? {
        guard let object = reader.object(value, at: path) else { return nil }
        guard !object.isEmpty else {
            reader.problem(path, "must hold at least one comparison, such as {\">=\": …}", code: "empty")
            return nil
        }
        var terms: [Comparison<Value>.Term] = []
        var failed = false
        for key in object.keys.sorted() {
            guard let op = Comparison<Value>.Operator(rawValue: key), operators.contains(op) else {
                let known = operators.map(\.rawValue).joined(separator: " ")
                reader.problem(path[key], "is not an operator; expected one of \(known)")
                failed = true
                continue
            }
            if let parsed = operand(&reader, object[key]!, path[key]) {
                terms.append(.init(op: op, value: parsed))
            } else {
                failed = true
            }
        }
        return failed ? nil : Comparison(terms)
    }

    private static func percent(_ value: JSONValue, at path: JSONPath, reader: inout DocumentReader) -> PercentRollout? {
        guard let object = reader.object(value, at: path) else { return nil }
        reader.rejectUnknownKeys(object, known: ["seed", "from", "to"], at: path)
        guard let seedValue = object["seed"], let seed = reader.string(seedValue, at: path["seed"]), !seed.isEmpty else {
            if object["seed"] == nil { reader.problem(path["seed"], "is required: it names the rollout", code: "missing") }
            return nil
        }
        func buckets(_ key: String, default fallback: Int?) -> Int? {
            guard let value = object[key] else {
                if fallback == nil { reader.problem(path[key], "is required", code: "missing") }
                return fallback
            }
            guard let percent = reader.number(value, at: path[key]) else { return nil }
            let scaled = percent * 100
            guard (0...100).contains(percent), scaled == scaled.rounded() else {
                reader.problem(path[key], "must be a percentage from 0 to 100 with at most two decimals")
                return nil
            }
            return Int(scaled)
        }
        guard let lower = buckets("from", default: 0), let upper = buckets("to", default: nil) else { return nil }
        guard lower <= upper else {
            reader.problem(path, "\"from\" must not be above \"to\"")
            return nil
        }
        return PercentRollout(seed: seed, lower: lower, upper: upper)
    }

    private static func attribute(_ value: JSONValue, at path: JSONPath, reader: inout DocumentReader) -> Condition? {
        guard let object = reader.object(value, at: path) else { return nil }
        let types = ["string", "number", "bool", "version"]
        reader.rejectUnknownKeys(object, known: Set(types + ["name"]), at: path)
        let name = object["name"].flatMap { reader.string($0, at: path["name"]) }
        if object["name"] == nil { reader.problem(path["name"], "is required", code: "missing") }
        let present = types.filter { object[$0] != nil }
        guard present.count == 1, let type = present.first, let operand = object[type] else {
            reader.problem(path, "must have exactly one test: \(types.joined(separator: ", "))")
            return nil
        }
        let at = path[type]
        let test: AttributeTest?
        switch type {
        case "string":
            test = comparison(operand, at: at, reader: &reader) { $0.string($1, at: $2) }.map(AttributeTest.string)
        case "number":
            test = comparison(operand, at: at, reader: &reader) { $0.number($1, at: $2) }.map(AttributeTest.number)
        case "version":
            test = comparison(operand, at: at, reader: &reader) { $0.parse($1, at: $2, SemanticVersion.init(parsing:)) }
                .map(AttributeTest.version)
        default:
            guard let object = reader.object(operand, at: at) else { return nil }
            guard object.count == 1, let (op, expected) = object.first, op == "==" || op == "!=" else {
                reader.problem(at, "takes one comparison, {\"==\": true} or {\"!=\": true}")
                return nil
            }
            test = reader.bool(expected, at: at[op]).map { AttributeTest.bool(op == "==" ? $0 : !$0) }
        }
        guard let name, let test else { return nil }
        return .attribute(name: name, test: test)
    }

    private static func zone(_ object: [String: JSONValue], at path: JSONPath, reader: inout DocumentReader) -> (TimeZone?, Bool) {
        guard let value = object["timeZone"] else { return (nil, true) }
        guard let text = reader.string(value, at: path["timeZone"]) else { return (nil, false) }
        guard let zone = TimeSyntax.timeZone(text) else {
            reader.problem(path["timeZone"], "\"\(text)\" is not a time zone; use an IANA name such as Asia/Tokyo or an offset such as +09:00")
            return (nil, false)
        }
        return (zone, true)
    }

    package static func dateWindow(_ value: JSONValue, at path: JSONPath, reader: inout DocumentReader) -> DateWindow? {
        guard let object = reader.object(value, at: path) else { return nil }
        reader.rejectUnknownKeys(object, known: ["from", "until", "timeZone"], at: path)
        let (zone, zoneOK) = zone(object, at: path, reader: &reader)
        guard object["from"] != nil || object["until"] != nil else {
            reader.problem(path, "needs \"from\", \"until\" or both", code: "missing")
            return nil
        }
        var ok = zoneOK
        func date(_ key: String) -> Date? {
            guard let value = object[key] else { return nil }
            guard let text = reader.string(value, at: path[key]) else {
                ok = false
                return nil
            }
            switch TimeSyntax.dateTime(text, zone: zone) {
            case .success(let date): return date
            case .failure(.missingZone):
                reader.problem(path[key], "\"\(text)\" has no offset; add one (such as +09:00) or give \"timeZone\"")
            case .failure(.malformed):
                reader.problem(path[key], "\"\(text)\" is not a date and time such as 2026-12-01T09:00:00")
            }
            ok = false
            return nil
        }
        let start = date("from")
        let end = date("until")
        guard ok, zoneOK else { return nil }
        if let start, let end, start >= end {
            reader.problem(path["until"], "must be after \"from\"")
            return nil
        }
        return DateWindow(start: start, end: end)
    }

    package static func weeklyWindow(_ value: JSONValue, at path: JSONPath, reader: inout DocumentReader) -> WeeklyWindow? {
        guard let object = reader.object(value, at: path) else { return nil }
        reader.rejectUnknownKeys(object, known: ["days", "from", "until", "timeZone"], at: path)
        let (zone, zoneOK) = zone(object, at: path, reader: &reader)
        var ok = zoneOK
        var days: Set<Weekday> = []
        if let value = object["days"], let names = reader.strings(value, at: path["days"]) {
            for (index, name) in names.enumerated() {
                if let day = Weekday(rawValue: name.lowercased()) {
                    days.insert(day)
                } else {
                    reader.problem(path["days"][index], "\"\(name)\" is not a weekday; use sun, mon, tue, wed, thu, fri, sat")
                    ok = false
                }
            }
        } else {
            if object["days"] == nil { reader.problem(path["days"], "is required", code: "missing") }
            ok = false
        }
        func minute(_ key: String) -> Int? {
            guard let value = object[key] else {
                reader.problem(path[key], "is required", code: "missing")
                return nil
            }
            guard let text = reader.string(value, at: path[key]) else { return nil }
            guard let minute = TimeSyntax.clockMinute(text) else {
                reader.problem(path[key], "\"\(text)\" is not a time of day such as 09:30 (00:00 to 24:00)")
                return nil
            }
            return minute
        }
        let start = minute("from")
        let end = minute("until")
        if object["timeZone"] == nil { reader.problem(path["timeZone"], "is required", code: "missing") }
        guard ok, let start, let end, let zone else { return nil }
        guard start != end else {
            reader.problem(path["until"], "must differ from \"from\"")
            return nil
        }
        return WeeklyWindow(days: days, startMinute: start, endMinute: end, timeZone: zone)
    }
}
