import Foundation

/// A Firebase Remote Config template (the REST and console JSON) converted to a Kizuna template.
///
/// What Firebase writes: `conditions[]` of `{name, expression, tagColor}`; `parameters` and
/// `parameterGroups.<group>.parameters` of `{defaultValue, conditionalValues, description, valueType}`, where each
/// value is `{"value": "<text>"}` or `{"useInAppDefault": true}` and `valueType` is STRING, BOOLEAN, NUMBER or JSON.
///
/// Nothing is guessed: a condition that cannot be translated is left out with its conditional values and listed in
/// ``problems`` with its JSON path, so a partial import never turns a narrow condition into a wider one. What was
/// translated with a change the user should know (re-rolled percentages, attributes the app must now send) is in
/// ``notes``. The resulting ``template`` is meant to parse as a ``RemoteConfigTemplate``; the command checks it, and
/// says why when it does not.
package struct FirebaseTemplateImport: Sendable {
    /// Something that could not be translated, at its path in the Firebase template.
    package struct Problem: Sendable, Hashable, Codable, CustomStringConvertible {
        package let path: String
        package let message: String
        package var description: String { "\(path): \(message)" }
    }

    /// The Kizuna template.
    package let template: JSONValue
    /// What was left out, each at its path in the Firebase template; empty when everything was translated.
    package let problems: [Problem]
    /// Translations the user should know about.
    package let notes: [String]
    /// How many conditions and parameters the Firebase template had, and how many made it.
    package let conditionCount: (firebase: Int, kizuna: Int)
    package let parameterCount: (firebase: Int, kizuna: Int)

    /// Converts `firebase`.
    /// - Parameter translator: How conditions are translated (with the Firebase app id this app stands for).
    package init(firebase: JSONValue, translator: FirebaseConditionTranslator = .init()) {
        var conversion = Conversion(translator: translator)
        conversion.run(firebase)
        template = conversion.result
        problems = conversion.problems
        notes = conversion.notes
        conditionCount = (conversion.firebaseConditions, conversion.translated.count)
        parameterCount = (conversion.firebaseParameters, conversion.parameters.count)
    }
}

private struct Conversion {
    let translator: FirebaseConditionTranslator
    var problems: [FirebaseTemplateImport.Problem] = []
    var notes: [String] = []
    /// Translated conditions in Firebase's order, and the names of those left out.
    var translated: [JSONValue] = []
    var translatedNames: Set<String> = []
    var untranslatedNames: Set<String> = []
    var parameters: [String: JSONValue] = [:]
    var firebaseConditions = 0
    var firebaseParameters = 0
    var result: JSONValue = [:]

    init(translator: FirebaseConditionTranslator) {
        self.translator = translator
    }

    mutating func problem(_ path: JSONPath, _ message: String) {
        problems.append(.init(path: path.description, message: message))
    }

    mutating func run(_ firebase: JSONValue) {
        guard let root = firebase.objectValue else { return problem(.root, "is not a Firebase template: expected a JSON object") }
        if let value = root["conditions"] {
            if let list = value.arrayValue {
                for (index, element) in list.enumerated() { condition(element, at: JSONPath.root["conditions"][index]) }
            } else {
                problem(JSONPath.root["conditions"], "must be an array")
            }
        }
        if let value = root["parameters"] {
            if let object = value.objectValue {
                for key in object.keys.sorted() { parameter(key, object[key]!, group: nil, at: JSONPath.root["parameters"][key]) }
            } else {
                problem(JSONPath.root["parameters"], "must be an object")
            }
        }
        if let value = root["parameterGroups"] {
            guard let groups = value.objectValue else { return problem(JSONPath.root["parameterGroups"], "must be an object") }
            for name in groups.keys.sorted() {
                let at = JSONPath.root["parameterGroups"][name]
                guard let members = groups[name]?["parameters"]?.objectValue else {
                    if groups[name]?["parameters"] != nil { problem(at["parameters"], "must be an object") }
                    continue
                }
                if groups[name]?["description"] != nil { notes.append("Group '\(name)': Kizuna groups have no description; it was dropped.") }
                for key in members.keys.sorted() { parameter(key, members[key]!, group: name, at: at["parameters"][key]) }
            }
        }
        var template: [String: JSONValue] = [:]
        if !translated.isEmpty { template["conditions"] = .array(translated) }
        if !parameters.isEmpty { template["parameters"] = .object(parameters) }
        result = .object(template)
        do {
            _ = try RemoteConfigTemplate(parsing: result)
        } catch {
            // The translation checks each piece; this catches what only the whole shows (such as the size limits).
            for detail in error.details { problems.append(.init(path: "(converted) " + (detail.field ?? "$"), message: detail.message)) }
        }
    }

    mutating func condition(_ value: JSONValue, at path: JSONPath) {
        firebaseConditions += 1
        guard let name = value["name"]?.stringValue, !name.isEmpty else { return problem(path["name"], "is required: a condition's name") }
        guard let expression = value["expression"]?.stringValue else {
            untranslatedNames.insert(name)
            return problem(path["expression"], "is required: the condition itself")
        }
        let outcome: FirebaseConditionTranslator.Outcome
        do {
            outcome = translator.translate(try FirebaseExpression(parsing: expression))
        } catch {
            untranslatedNames.insert(name)
            return problem(path["expression"], "condition '\(name)' could not be read: \(error)")
        }
        guard let when = outcome.condition else {
            untranslatedNames.insert(name)
            for reason in outcome.untranslated { problem(path["expression"], "condition '\(name)' was left out: \(reason)") }
            return
        }
        // Kizuna's own reader has the last word (a bad version, a time zone it does not know, a 0.001 % step).
        var reader = DocumentReader()
        guard Condition.parse(when, at: JSONPath.root["when"], reader: &reader) != nil else {
            untranslatedNames.insert(name)
            for detail in reader.report.problems { problem(path["expression"], "condition '\(name)' was left out: \(detail.message)") }
            return
        }
        notes += outcome.notes.map { "Condition '\(name)': \($0)." }
        translatedNames.insert(name)
        translated.append(["name": .string(name), "when": when])
    }

    mutating func parameter(_ key: String, _ value: JSONValue, group: String?, at path: JSONPath) {
        firebaseParameters += 1
        guard let object = value.objectValue else { return problem(path, "must be an object") }
        let typeName = object["valueType"]?.stringValue ?? "STRING"
        let type: RemoteConfigTemplate.ValueType
        switch typeName {
        case "STRING", "PARAMETER_VALUE_TYPE_UNSPECIFIED": type = .string
        case "BOOLEAN": type = .bool
        case "NUMBER": type = .number
        case "JSON": type = .json
        default: return problem(path["valueType"], "'\(typeName)' is not a Firebase value type (STRING, BOOLEAN, NUMBER, JSON)")
        }
        var conditional: [String: JSONValue] = [:]
        if let values = object["conditionalValues"]?.objectValue {
            for name in values.keys.sorted() {
                let at = path["conditionalValues"][name]
                if untranslatedNames.contains(name) {
                    problem(at, "left out with its condition '\(name)', which was not translated")
                } else if !translatedNames.contains(name) {
                    problem(at, "names no condition in $.conditions")
                } else if let converted = self.value(values[name]!, as: type, at: at) {
                    conditional[name] = converted
                }
            }
        }
        if object["defaultValue"]?["useInAppDefault"]?.boolValue == true || object["defaultValue"] == nil {
            guard (object["conditionalValues"]?.objectValue ?? [:]).isEmpty else {
                return problem(path["defaultValue"], "uses the in-app default, which a Kizuna template cannot say beside conditional values")
            }
            return notes.append("Parameter '\(key)' uses the in-app default everywhere: it was left out, and the app's own default applies.")
        }
        guard let defaultValue = self.value(object["defaultValue"]!, as: type, at: path["defaultValue"]) else { return }
        var parameter: [String: JSONValue] = ["type": .string(type.rawValue), "default": defaultValue]
        if !conditional.isEmpty { parameter["conditionalValues"] = .object(conditional) }
        if let description = object["description"]?.stringValue, !description.isEmpty { parameter["description"] = .string(description) }
        if let group { parameter["group"] = .string(group) }
        if parameters[key] != nil { return problem(path, "'\(key)' is defined twice (in parameters and in a group, or in two groups)") }
        parameters[key] = .object(parameter)
    }

    /// A Firebase value, `{"value": "<text>"}`, typed; `nil` after recording why it cannot be.
    mutating func value(_ value: JSONValue, as type: RemoteConfigTemplate.ValueType, at path: JSONPath) -> JSONValue? {
        guard let text = value["value"]?.stringValue else {
            if value["useInAppDefault"]?.boolValue == true {
                problem(path, "uses the in-app default, which a Kizuna conditional value cannot")
            } else if let kind = ["personalizationValue", "rolloutValue", "experimentValue"].first(where: { value[$0] != nil }) {
                problem(path, "is a Firebase-managed \(kind), which has no Kizuna equivalent")
            } else {
                problem(path["value"], "is required: the value as text")
            }
            return nil
        }
        do {
            return try type.value(fromText: text)
        } catch {
            problem(path["value"], error.message)
            return nil
        }
    }
}
