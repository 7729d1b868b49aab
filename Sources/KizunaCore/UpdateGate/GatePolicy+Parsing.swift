import Foundation

extension GatePolicy {
    /// Reads and checks a policy.
    ///
    /// The JSON form (every field optional):
    /// ```json
    /// {
    ///   "minimumVersion": "3.10.0",
    ///   "recommendedVersion": "3.12.0",
    ///   "nagIntervalSeconds": 86400,
    ///   "blockedVersions": ["3.10.1", {">=": "3.11.0", "<": "3.11.3"}],
    ///   "maintenance": {"active": false, "window": {"from": "2026-12-01T01:00", "until": "2026-12-01T03:00",
    ///                   "timeZone": "Asia/Tokyo"}, "allowInstallIds": ["tester-1"]},
    ///   "minimumOSVersion": {"version": "17.0", "deadline": "2027-01-15T00:00:00+09:00",
    ///                        "windows": [{"days": ["sat", "sun"], "from": "02:00", "until": "05:00", "timeZone": "Asia/Tokyo"}]},
    ///   "osAdvisories": [{"osVersion": {">=": "26.0", "<": "26.0.1"}, "platforms": ["ios"], "action": "recommend",
    ///                     "notice": {"url": null, "texts": {"en": {"title": "…", "message": "…"}}}}],
    ///   "notices": {"require": {"url": "https://apps.apple.com/app/id1", "texts": {"ja": {"title": "…", "message": "…"}}},
    ///               "maintenance": {"url": null}},
    ///   "defaultLanguage": "en"
    /// }
    /// ```
    /// - Throws: `validation_failed` listing every problem with the JSON path of its node.
    public init(parsing source: JSONValue) throws(KizunaError) {
        var reader = DocumentReader()
        var policy = Parts()
        if let root = reader.object(source, at: .root) {
            reader.rejectUnknownKeys(
                root,
                known: [
                    "minimumVersion", "recommendedVersion", "nagIntervalSeconds", "blockedVersions", "maintenance",
                    "minimumOSVersion", "osAdvisories", "notices", "defaultLanguage",
                ],
                at: .root
            )
            policy.read(root, reader: &reader)
        }
        try reader.throwIfFailed("The gate policy")
        minimumVersion = policy.minimumVersion
        recommendedVersion = policy.recommendedVersion
        nagInterval = policy.nagInterval
        blockedVersions = policy.blockedVersions
        maintenance = policy.maintenance
        minimumOSVersion = policy.minimumOSVersion
        osAdvisories = policy.osAdvisories
        notices = policy.notices
        defaultLanguage = policy.defaultLanguage
        self.source = source
    }

    /// The fields while they are read.
    private struct Parts {
        var minimumVersion: SemanticVersion?
        var recommendedVersion: SemanticVersion?
        var nagInterval = GatePolicy.defaultNagInterval
        var blockedVersions: [Comparison<SemanticVersion>] = []
        var maintenance: Maintenance?
        var minimumOSVersion: OSRequirement?
        var osAdvisories: [OSAdvisory] = []
        var notices: [NoticeKind: GateNotice] = [:]
        var defaultLanguage = "en"

        mutating func read(_ root: [String: JSONValue], reader: inout DocumentReader) {
            let path = JSONPath.root
            minimumVersion = root["minimumVersion"].flatMap { reader.parse($0, at: path["minimumVersion"], SemanticVersion.init(parsing:)) }
            recommendedVersion = root["recommendedVersion"].flatMap {
                reader.parse($0, at: path["recommendedVersion"], SemanticVersion.init(parsing:))
            }
            if let minimumVersion, let recommendedVersion, recommendedVersion < minimumVersion {
                reader.problem(path["recommendedVersion"], "is below minimumVersion \(minimumVersion); recommend a version at or above it")
            }
            if let value = root["nagIntervalSeconds"], let seconds = reader.number(value, at: path["nagIntervalSeconds"]) {
                if seconds >= 0, seconds == seconds.rounded(), seconds <= 31_536_000 {
                    nagInterval = Int(seconds)
                } else {
                    reader.problem(path["nagIntervalSeconds"], "must be a whole number of seconds from 0 to 31536000 (a year)")
                }
            }
            if let value = root["blockedVersions"], let list = reader.array(value, at: path["blockedVersions"]) {
                for (index, entry) in list.enumerated() {
                    let at = path["blockedVersions"][index]
                    if case .string = entry {
                        if let version = reader.parse(entry, at: at, SemanticVersion.init(parsing:)) {
                            blockedVersions.append(Comparison([.init(op: .equal, value: version)]))
                        }
                    } else if let comparison = Condition.comparison(
                        entry, at: at, reader: &reader,
                        operand: {
                            $0.parse($1, at: $2, SemanticVersion.init(parsing:))
                        })
                    {
                        blockedVersions.append(comparison)
                    }
                }
            }
            if let value = root["maintenance"] { maintenance = Self.maintenance(value, at: path["maintenance"], reader: &reader) }
            if let value = root["minimumOSVersion"] {
                minimumOSVersion = Self.osRequirement(value, at: path["minimumOSVersion"], reader: &reader)
            }
            if let value = root["osAdvisories"], let list = reader.array(value, at: path["osAdvisories"]) {
                osAdvisories = list.enumerated().compactMap { Self.osAdvisory($1, at: path["osAdvisories"][$0], reader: &reader) }
            }
            if let value = root["notices"] { notices = Self.notices(value, at: path["notices"], reader: &reader) }
            if let value = root["defaultLanguage"], let language = reader.string(value, at: path["defaultLanguage"]) {
                defaultLanguage = LocaleTag(language).description
            }
        }

        static func maintenance(_ value: JSONValue, at path: JSONPath, reader: inout DocumentReader) -> Maintenance? {
            guard let object = reader.object(value, at: path) else { return nil }
            reader.rejectUnknownKeys(object, known: ["active", "window", "allowInstallIds"], at: path)
            let active = object["active"].flatMap { reader.bool($0, at: path["active"]) } ?? false
            let window = object["window"].flatMap { Condition.dateWindow($0, at: path["window"], reader: &reader) }
            var allowed: Set<String> = []
            if let value = object["allowInstallIds"], let list = reader.array(value, at: path["allowInstallIds"]) {
                for (index, element) in list.enumerated() {
                    if let id = reader.string(element, at: path["allowInstallIds"][index]) { allowed.insert(id) }
                }
            }
            return Maintenance(active: active, window: window, allowInstallIds: allowed)
        }

        static func osRequirement(_ value: JSONValue, at path: JSONPath, reader: inout DocumentReader) -> OSRequirement? {
            guard let object = reader.object(value, at: path) else { return nil }
            reader.rejectUnknownKeys(object, known: ["version", "deadline", "timeZone", "windows"], at: path)
            guard let versionValue = object["version"] else {
                reader.problem(path["version"], "is required", code: "missing")
                return nil
            }
            let version = reader.parse(versionValue, at: path["version"], SemanticVersion.init(parsing:))
            var deadline: Date?
            if let value = object["deadline"] {
                var window: [String: JSONValue] = ["from": value]
                window["timeZone"] = object["timeZone"]
                deadline = Condition.dateWindow(.object(window), at: path, reader: &reader)?.start
            }
            var windows: [WeeklyWindow] = []
            if let value = object["windows"], let list = reader.array(value, at: path["windows"]) {
                for (index, element) in list.enumerated() {
                    if let window = Condition.weeklyWindow(element, at: path["windows"][index], reader: &reader) { windows.append(window) }
                }
            }
            return version.map { OSRequirement(version: $0, deadline: deadline, windows: windows) }
        }

        static func notices(_ value: JSONValue, at path: JSONPath, reader: inout DocumentReader) -> [NoticeKind: GateNotice] {
            guard let object = reader.object(value, at: path) else { return [:] }
            var result: [NoticeKind: GateNotice] = [:]
            for key in object.keys.sorted() {
                let at = path[key]
                guard let kind = NoticeKind(rawValue: key) else {
                    let known = NoticeKind.allCases.map(\.rawValue).joined(separator: ", ")
                    reader.problem(at, "is not a kind of notice; expected one of \(known)", code: "unknown_field")
                    continue
                }
                if let notice = Self.notice(object[key]!, at: at, reader: &reader) { result[kind] = notice }
            }
            return result
        }

        static func osAdvisory(_ value: JSONValue, at path: JSONPath, reader: inout DocumentReader) -> OSAdvisory? {
            guard let object = reader.object(value, at: path) else { return nil }
            reader.rejectUnknownKeys(object, known: ["osVersion", "platforms", "action", "notice"], at: path)
            var versions: Comparison<SemanticVersion>?
            let at = path["osVersion"]
            switch object["osVersion"] {
            case nil:
                reader.problem(at, "is required: a version such as \"26.0\" or a range such as {\">=\": \"26.0\", \"<\": \"26.1\"}", code: "missing")
            case .string(let text)?:
                versions = reader.parse(.string(text), at: at, SemanticVersion.init(parsing:)).map { Comparison([.init(op: .equal, value: $0)]) }
            case let range?:
                versions = Condition.comparison(range, at: at, reader: &reader) { $0.parse($1, at: $2, SemanticVersion.init(parsing:)) }
            }
            var platforms: Set<Platform> = []
            if let value = object["platforms"], let names = reader.strings(value, at: path["platforms"]) {
                for (index, name) in names.enumerated() {
                    guard let platform = Platform(rawValue: name) else {
                        let known = Platform.allCases.map(\.rawValue).joined(separator: ", ")
                        reader.problem(path["platforms"][index], "\"\(name)\" is not a platform; expected one of \(known)")
                        continue
                    }
                    platforms.insert(platform)
                }
            }
            var action = UpdateDecision.Action.recommend
            if let value = object["action"], let name = reader.string(value, at: path["action"]) {
                switch name {
                case "recommend": action = .recommend
                case "require": action = .require
                default: reader.problem(path["action"], "\"\(name)\" is not recommend or require")
                }
            }
            let notice = object["notice"].flatMap { Self.notice($0, at: path["notice"], reader: &reader) }
            return versions.map { OSAdvisory(versions: $0, platforms: platforms, action: action, notice: notice) }
        }

        /// One notice: `{"url": "https://…" | null, "texts": {"ja": {"title", "message"}}}`.
        static func notice(_ value: JSONValue, at path: JSONPath, reader: inout DocumentReader) -> GateNotice? {
            guard let notice = reader.object(value, at: path) else { return nil }
            reader.rejectUnknownKeys(notice, known: ["url", "texts"], at: path)
            var link = GateNotice.Link.automatic
            switch notice["url"] {
            case nil: break
            case .null?: link = .none
            case let value?:
                guard let text = reader.string(value, at: path["url"]) else { break }
                if GateNotice.isLinkURL(text) {
                    link = .url(text)
                } else {
                    reader.problem(path["url"], "\"\(text)\" is not an absolute https, http or itms-apps URL (or null, for no button)")
                }
            }
            var texts: [String: LocalizedText] = [:]
            if let value = notice["texts"], let byLanguage = reader.object(value, at: path["texts"]) {
                for language in byLanguage.keys.sorted() {
                    let textPath = path["texts"][language]
                    guard let entry = reader.object(byLanguage[language]!, at: textPath) else { continue }
                    reader.rejectUnknownKeys(entry, known: ["title", "message"], at: textPath)
                    let title = entry["title"].flatMap { reader.string($0, at: textPath["title"]) }
                    let message = entry["message"].flatMap { reader.string($0, at: textPath["message"]) }
                    if entry["title"] == nil { reader.problem(textPath["title"], "is required", code: "missing") }
                    if entry["message"] == nil { reader.problem(textPath["message"], "is required", code: "missing") }
                    if let title, let message { texts[LocaleTag(language).description] = LocalizedText(title: title, message: message) }
                }
            }
            return GateNotice(texts: texts, link: link)
        }
    }
}
