import Foundation

/// The hand-made force-update parameter, `{"title", "message", "version", "url"}`, as gate policy fields.
///
/// Apps built on that pattern show an alert that cannot be dismissed when their version is below `version`, whose
/// only button opens `url` (none: the button does nothing). In a gate policy that is `minimumVersion` with the texts
/// as the `require` notice in one language. `version` is read as a version, never compared as text.
package struct ForceAlertImport: Sendable {
    /// The version below which the app is blocked.
    package let minimumVersion: SemanticVersion
    package let title: String
    package let message: String
    /// The button's link; `nil` when the parameter has none (or an empty one).
    package let url: String?
    /// The language of the texts, as a normalized tag (`ja`, `en-us`).
    package let language: String

    /// Reads the parameter's JSON.
    /// - Parameter language: The language the texts are written in, such as `ja`.
    /// - Throws: `validation_failed` listing every problem with its path.
    package init(parameter: JSONValue, language: String) throws(KizunaError) {
        var reader = DocumentReader()
        var parts: (version: SemanticVersion?, title: String?, message: String?, url: String?) = (nil, nil, nil, nil)
        if language.isEmpty || !language.allSatisfy({ $0.isASCIILetter || $0.isASCIIDigit || $0 == "-" || $0 == "_" }) {
            reader.problem(.root, "'\(language)' is not a language tag such as ja or en-US", code: "bad_language")
        }
        if let root = reader.object(parameter, at: .root) {
            for field in ["title", "message", "version"] where root[field] == nil {
                reader.problem(JSONPath.root[field], "is required", code: "missing")
            }
            parts.version = root["version"].flatMap { reader.parse($0, at: JSONPath.root["version"], SemanticVersion.init(parsing:)) }
            parts.title = root["title"].flatMap { reader.string($0, at: JSONPath.root["title"]) }
            parts.message = root["message"].flatMap { reader.string($0, at: JSONPath.root["message"]) }
            if let value = root["url"], value != .null, let text = reader.string(value, at: JSONPath.root["url"]), !text.isEmpty {
                if GateNotice.isLinkURL(text) {
                    parts.url = text
                } else {
                    reader.problem(JSONPath.root["url"], "\"\(text)\" is not an absolute https, http or itms-apps URL")
                }
            }
        }
        try reader.throwIfFailed("The force-update parameter")
        minimumVersion = parts.version!
        title = parts.title!
        message = parts.message!
        url = parts.url
        self.language = LocaleTag(language).description
    }

    /// The parameter's JSON from a whole Firebase template: the default value of `key`, at the top or in a group.
    /// - Throws: `validation_failed` when the template has no such parameter or its default is not JSON.
    package static func parameter(_ key: String, inFirebaseTemplate template: JSONValue) throws(KizunaError) -> JSONValue {
        let groups = template["parameterGroups"]?.objectValue ?? [:]
        let found = template["parameters"]?[key] ?? groups.keys.sorted().lazy.compactMap { groups[$0]?["parameters"]?[key] }.first
        guard let found else {
            throw KizunaError(.validationFailed, "The Firebase template has no parameter '\(key)'.", field: "parameters.\(key)")
        }
        if let conditional = found["conditionalValues"]?.objectValue, !conditional.isEmpty {
            throw KizunaError(
                .validationFailed,
                "'\(key)' also has conditional values (\(conditional.keys.sorted().joined(separator: ", "))), and the import reads only its "
                    + "default: save the JSON of the value you mean to a file and import that.",
                field: "parameters.\(key).conditionalValues")
        }
        guard let text = found["defaultValue"]?["value"]?.stringValue,
            let value = try? JSONValue(parsing: text)
        else {
            throw KizunaError(.validationFailed, "The default value of '\(key)' is not JSON text.", field: "parameters.\(key).defaultValue.value")
        }
        return value
    }

    /// The fields this import sets, on their own: what `--validate-only` shows.
    package var policy: JSONValue { .object(merged(into: [:])) }

    /// `live` with the minimum version and the `require` notice replaced: its texts in ``language`` and its link.
    /// Other fields, other notices and the notice's texts in other languages stay. The default language becomes
    /// ``language`` unless the notice has texts in the live one.
    package func merged(into live: [String: JSONValue]) -> [String: JSONValue] {
        var policy = live
        policy["minimumVersion"] = .string(minimumVersion.description)
        var notices = policy["notices"]?.objectValue ?? [:]
        var require = notices["require"]?.objectValue ?? [:]
        var texts = require["texts"]?.objectValue ?? [:]
        texts[language] = ["title": .string(title), "message": .string(message)]
        require["texts"] = .object(texts)
        // No link: `null`, a prompt without a button (left out, a require notice would open the store page).
        require["url"] = url.map(JSONValue.string) ?? .null
        notices["require"] = .object(require)
        policy["notices"] = .object(notices)
        let liveLanguage = policy["defaultLanguage"]?.stringValue.map { LocaleTag($0).description }
        // The policy's own keys may be written `ja-JP`; compare them as the gate reads them.
        let languages = Set(texts.keys.map { LocaleTag($0).description })
        if liveLanguage.map(languages.contains) != true { policy["defaultLanguage"] = .string(language) }
        return policy
    }
}
