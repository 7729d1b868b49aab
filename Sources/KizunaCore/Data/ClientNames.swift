/// The root field and type names of one model, as Amplify names them: what the server's schema declares, and what
/// the SDK's outbox and offline cache, and `kizuna codegen swift`, call.
package struct ClientNames: Sendable {
    package let model: String

    package init(model: String) {
        self.model = model
    }

    package var get: String { "get\(model)" }
    package var list: String { "list\(Self.plural(model))" }
    package var sync: String { "sync\(Self.plural(model))" }
    package var create: String { "create\(model)" }
    package var update: String { "update\(model)" }
    package var delete: String { "delete\(model)" }
    package var onCreate: String { "onCreate\(model)" }
    package var onUpdate: String { "onUpdate\(model)" }
    package var onDelete: String { "onDelete\(model)" }

    /// The query of an index: `byRoom` on `Message` is `listMessagesByRoom`.
    package func list(by index: String) -> String {
        let stem = index.hasPrefix("by") && index.count > 2 ? String(index.dropFirst(2)) : index
        return list + "By" + stem.prefix(1).uppercased() + stem.dropFirst()
    }

    /// English plural of a type name, the way Amplify's codegen forms list query names.
    package static func plural(_ name: String) -> String {
        let lower = name.lowercased()
        if lower.hasSuffix("y"), let before = lower.dropLast().last, !"aeiou".contains(before) { return name.dropLast() + "ies" }
        if ["s", "x", "z", "ch", "sh"].contains(where: lower.hasSuffix) { return name + "es" }
        return name + "s"
    }
}
