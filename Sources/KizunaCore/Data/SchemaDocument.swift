import Foundation

/// The published form of an app's data schema: `{"sdl": "<GraphQL SDL>"}`, versioned like every document.
///
/// The SDL sits in an object rather than being the document itself so later options can join it without a new
/// document shape.
public enum SchemaDocument {
    /// The largest SDL accepted, in UTF-8 bytes: far above any real app's schema, and a bound on parsing work.
    public static let maximumSize = 256 * 1024

    /// The document publishing `sdl`.
    public static func document(sdl: String) -> JSONValue {
        .object(["sdl": .string(sdl)])
    }

    /// The SDL a schema document holds; the empty document (an app's version 0) holds none.
    /// - Throws: `validation_failed` when the document is not `{"sdl": string}` or the SDL is too large.
    public static func sdl(in document: JSONValue) throws(KizunaError) -> String {
        guard case .object(let fields) = document else {
            throw KizunaError(.validationFailed, "A data schema is published as {\"sdl\": \"…\"}.", field: "$")
        }
        if fields.isEmpty { return "" }
        guard case .string(let sdl)? = fields["sdl"], fields.count == 1 else {
            throw KizunaError(.validationFailed, "A data schema is published as {\"sdl\": \"…\"}, with the GraphQL SDL as a string.", field: "$.sdl")
        }
        guard sdl.utf8.count <= maximumSize else {
            throw KizunaError(.validationFailed, "The SDL is larger than \(maximumSize / 1024) KB.", field: "$.sdl")
        }
        return sdl
    }
}

/// One change publishing a data schema makes to the store, as `…/schema:publish?validateOnly=true` lists them.
public struct SchemaChangeInfo: Sendable, Codable, Hashable {
    /// What changes: `createModel`, `addField`, `addIndex`, `dropField`, `changeField`, …
    public var action: String
    /// The model it concerns.
    public var model: String
    /// The field, for field changes.
    public var field: String?
    /// The index, for index changes.
    public var index: String?
    /// Whether it loses data or narrows what is valid: refused unless the publish allows destructive changes.
    public var destructive: Bool
    /// The change in a sentence.
    public var summary: String

    public init(action: String, model: String, field: String? = nil, index: String? = nil, destructive: Bool, summary: String) {
        self.action = action
        self.model = model
        self.field = field
        self.index = index
        self.destructive = destructive
        self.summary = summary
    }
}
