import Foundation

/// The kinds of document an app publishes, each versioned with the same ETag, history and rollback rules.
public enum DocumentKind: String, Sendable, Hashable, CaseIterable, Codable {
    /// A remote config template.
    case config
    /// An update gate policy.
    case gate
    /// The app's data schema: GraphQL SDL declaring its models, as `{"sdl": "type Message @model { … }"}`.
    case schema

    /// The kinds devices read (`config:fetch`, `gate:check`) and hear of on the event stream.
    public static let servedToDevices: [DocumentKind] = [.config, .gate]

    /// Checks a document of this kind, listing every problem.
    public func validate(_ document: JSONValue) throws(KizunaError) {
        if let path = document.pathDeeperThan(Self.maximumDepth) {
            throw KizunaError(
                .validationFailed,
                "The \(title) nests deeper than \(Self.maximumDepth) levels at \(path); flatten it (every read of a deep document costs time).",
                field: path)
        }
        switch self {
        case .config: _ = try RemoteConfigTemplate(parsing: document)
        case .gate: _ = try GatePolicy(parsing: document)
        case .schema: _ = try SchemaDocument.sdl(in: document)  // the SDL itself is checked by the server's parser
        }
    }

    /// Arrays and objects nested in each other, at most: enough for any real template, and a bound on the work every
    /// later read, diff and evaluation of the document does.
    public static let maximumDepth = 32

    /// What people call it, for messages: "config template", "gate policy".
    public var title: String {
        switch self {
        case .config: "config template"
        case .gate: "gate policy"
        case .schema: "data schema"
        }
    }
}

/// One published version of a document, as the admin API answers it.
public struct PublishedDocument: Sendable, Codable, Hashable {
    /// The version, counting from 1; version 0 is the empty document an app starts with.
    public var version: Int64
    /// The template or policy exactly as published.
    public var document: JSONValue
    /// The name of the admin token that published it.
    public var author: String
    /// What the publisher said about the change.
    public var message: String?
    /// For a rollback, the version it restored.
    public var rollbackOf: Int64?
    /// When it was published.
    public var publishedAt: Date

    /// Creates a version.
    public init(version: Int64, document: JSONValue, author: String, message: String?, rollbackOf: Int64?, publishedAt: Date) {
        self.version = version
        self.document = document
        self.author = author
        self.message = message
        self.rollbackOf = rollbackOf
        self.publishedAt = publishedAt
    }

    /// The strong ETag of this version, to send back as `If-Match`: `"<version>"`.
    public var etag: String { ExpectedVersion.version(version).ifMatch }

    /// The empty document of an app that has published nothing.
    public static let initial = PublishedDocument(
        version: 0, document: .object([:]), author: "kizuna", message: nil, rollbackOf: nil, publishedAt: Date(timeIntervalSince1970: 0))
}

/// What the current version must be for a publish to go through: the `If-Match` header.
public enum ExpectedVersion: Sendable, Hashable {
    /// `If-Match: *`: whatever is current.
    case any
    /// `If-Match: "<version>"`: exactly this version.
    case version(Int64)

    /// The header's value.
    public var ifMatch: String {
        switch self {
        case .any: "*"
        case .version(let version): "\"\(version)\""
        }
    }
}

/// A version in a document's history, without its body.
public struct DocumentVersionInfo: Sendable, Codable, Hashable {
    public var version: Int64
    public var author: String
    public var message: String?
    public var rollbackOf: Int64?
    public var publishedAt: Date

    public init(version: Int64, author: String, message: String?, rollbackOf: Int64?, publishedAt: Date) {
        self.version = version
        self.author = author
        self.message = message
        self.rollbackOf = rollbackOf
        self.publishedAt = publishedAt
    }
}

/// A page of a document's history, newest first.
public struct DocumentHistory: Sendable, Codable, Hashable {
    public var versions: [DocumentVersionInfo]
    public init(versions: [DocumentVersionInfo]) { self.versions = versions }
}

/// What changed between two versions of a document.
public struct DocumentDiff: Sendable, Codable, Hashable {
    public var from: Int64
    public var to: Int64
    public var changes: [JSONChange]
    public init(from: Int64, to: Int64, changes: [JSONChange]) {
        self.from = from
        self.to = to
        self.changes = changes
    }
}

/// The answer to a dry-run publish (`?validateOnly=true`) of a valid document; invalid ones fail with
/// `validation_failed`.
public struct DocumentValidation: Sendable, Codable, Hashable {
    public var valid: Bool
    public var currentVersion: Int64
    /// For a data schema: what publishing it would change in the store, against the live version.
    public var changes: [SchemaChangeInfo]?
    public init(valid: Bool, currentVersion: Int64, changes: [SchemaChangeInfo]? = nil) {
        self.valid = valid
        self.currentVersion = currentVersion
        self.changes = changes
    }
}

/// The body of `…:publish`.
public struct PublishRequest: Sendable, Codable, Hashable {
    public var document: JSONValue
    public var message: String?
    public init(document: JSONValue, message: String?) {
        self.document = document
        self.message = message
    }
}

/// The body of `…:rollback`.
public struct RollbackRequest: Sendable, Codable, Hashable {
    public var version: Int64
    public var message: String?
    public init(version: Int64, message: String?) {
        self.version = version
        self.message = message
    }
}
