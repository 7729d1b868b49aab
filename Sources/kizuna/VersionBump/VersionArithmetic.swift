import ArgumentParser
import Foundation
import KizunaCore

/// What `kizuna version bump` changes.
enum BumpKind: String, CaseIterable, Codable, Sendable, ExpressibleByArgument {
    case major, minor, patch, build
}

/// A marketing version and a build number, shown as `1.2.3 (45)`.
struct VersionPair: Codable, Sendable, Hashable, CustomStringConvertible {
    var version: String
    var build: String

    var description: String { "\(version) (\(build))" }
}

/// The next version and build number.
enum VersionArithmetic {
    /// `version` bumped by `kind`: major resets minor and patch, minor resets patch, `build` keeps it.
    ///
    /// The result has at least as many components as `version` and drops any pre-release or build metadata:
    /// `1.2` → minor `1.3`, patch `1.2.1`; `2.0.0-beta.1` → patch `2.0.1`.
    static func bump(_ version: String, _ kind: BumpKind) throws -> String {
        let parsed = try parse(version, .marketingVersion) as SemanticVersion
        let position: Int
        switch kind {
        case .major: position = 0
        case .minor: position = 1
        case .patch: position = 2
        case .build: return version
        }
        var components = parsed.components
        while components.count <= position { components.append(0) }
        components[position] += 1
        for index in (position + 1)..<components.count { components[index] = 0 }
        return components.map(String.init).joined(separator: ".")
    }

    /// The build number after `build`: its last component plus one (`45` → `46`, `1.2.3` → `1.2.4`).
    static func nextBuild(_ build: String) throws -> String {
        let parsed = try parse(build, .buildNumber) as BuildNumber
        var components = parsed.components
        components[components.count - 1] += 1
        return components.map(String.init).joined(separator: ".")
    }

    /// The four choices from `current`, each with `build` as its build number.
    static func choices(from current: VersionPair, build: String) throws -> [(kind: BumpKind, pair: VersionPair)] {
        try BumpKind.allCases.map { kind in (kind, VersionPair(version: try bump(current.version, kind), build: build)) }
    }

    /// The interactive menu: the current `version (build)` and the four numbered choices.
    static func menu(current: VersionPair, choices: [(kind: BumpKind, pair: VersionPair)]) -> String {
        var lines = ["Current version: \(current)"]
        for (number, choice) in choices.enumerated() {
            let name = choice.kind.rawValue.padding(toLength: 6, withPad: " ", startingAt: 0)
            lines.append("  \(number + 1)) \(name) \(choice.pair)")
        }
        lines.append("Choose 1-\(choices.count): ")
        return lines.joined(separator: "\n")
    }

    /// Throws `bad_value` unless `text` is a marketing version or a build number, as `field` says.
    static func validate(_ text: String, _ field: VersionField) throws {
        if field == .marketingVersion {
            _ = try parse(text, field) as SemanticVersion
        } else {
            _ = try parse(text, field) as BuildNumber
        }
    }

    /// The highest of `values`, compared as versions or build numbers.
    static func highest(_ values: [String], _ field: VersionField) throws -> String {
        if field == .marketingVersion {
            let parsed = try values.map { try parse($0, field) as SemanticVersion }
            return parsed.max()!.description
        }
        return try values.map { try parse($0, field) as BuildNumber }.max()!.description
    }

    private static func parse<Value: VersionText>(_ text: String, _ field: VersionField) throws -> Value {
        do {
            return try Value(parsing: text)
        } catch {
            throw VersionBumpError(code: "bad_value", message: "\(field.buildSetting) \(error.description)")
        }
    }
}
