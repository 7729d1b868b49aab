import KizunaCore

/// An app's data API schema, checked: the models it stores, in the order its SDL declares them.
///
/// Read from GraphQL SDL in the dialect Amplify apps already write (`@model`, `@index`, `@belongsTo`, `@hasMany`,
/// `@auth`), so a team leaving AppSync brings its schema as it is. Everything the SDL can get wrong is caught here,
/// once, so storage, queries and deliveries take the model as true without checking it again.
package struct DataSchema: Sendable, Equatable {
    /// The stored models, in declaration order.
    package var models: [DataModel]
    /// The enum types, in declaration order.
    package var enums: [DataEnum]

    /// Creates a schema from models and enums that are already checked (tests, and the empty schema).
    package init(models: [DataModel], enums: [DataEnum] = []) {
        self.models = models
        self.enums = enums
    }

    /// The empty schema, for an app that never published one: no models, so every data request is refused.
    package static let empty = DataSchema(models: [])

    /// The model called `name`, or `nil`.
    package func model(named name: String) -> DataModel? {
        models.first { $0.name == name }
    }

    /// The enum called `name`, or `nil`.
    package func enumeration(named name: String) -> DataEnum? {
        enums.first { $0.name == name }
    }
}

/// An enum type: a field of this type holds one of `values`, stored as the value's name.
package struct DataEnum: Sendable, Equatable {
    /// The type's name.
    package var name: String
    /// The allowed values, in declaration order.
    package var values: [String]

    package init(name: String, values: [String]) {
        self.name = name
        self.values = values
    }
}

/// One stored model (a `@model` type): its columns, indexes, relations and access rules.
package struct DataModel: Sendable, Equatable {
    /// The type's name.
    package var name: String
    /// The stored fields: `id` first, then the declared fields in order, then `createdAt`, `updatedAt`, an added
    /// `owner` (only when an owner rule uses the default field and the SDL does not declare it) and `_version`.
    /// Relation fields are not here: they are not columns (see ``relations``).
    package var fields: [DataField]
    /// The declared indexes, in declaration order.
    package var indexes: [DataIndex]
    /// The relation fields, in declaration order.
    package var relations: [DataRelation]
    /// The access rules; empty when the type has no `@auth`, which lets nobody in.
    package var rules: [AuthRule]

    package init(name: String, fields: [DataField], indexes: [DataIndex] = [], relations: [DataRelation] = [], rules: [AuthRule] = []) {
        self.name = name
        self.fields = fields
        self.indexes = indexes
        self.relations = relations
        self.rules = rules
    }

    /// The stored field called `name`, or `nil`.
    package func field(named name: String) -> DataField? {
        fields.first { $0.name == name }
    }

    /// The relation field called `name`, or `nil`.
    package func relation(named name: String) -> DataRelation? {
        relations.first { $0.field == name }
    }
}

/// The built-in scalar types a field can have; the raw value is the SDL name.
package enum ScalarType: String, Sendable, Equatable, Codable {
    case id = "ID"
    case string = "String"
    case int = "Int"
    case float = "Float"
    case boolean = "Boolean"
    case dateTime = "DateTime"
    case json = "JSON"

    /// The scalar an SDL type name stands for, accepting Amplify's `AWSDateTime` and `AWSJSON` so its schemas read
    /// unchanged; `nil` for any other name.
    package init?(sdlName: String) {
        switch sdlName {
        case "AWSDateTime": self = .dateTime
        case "AWSJSON": self = .json
        default: self.init(rawValue: sdlName)
        }
    }

    /// Every type name ``init(sdlName:)`` accepts, for messages and for refusing a model or enum that shadows one.
    package static let sdlNames = ["ID", "String", "Int", "Float", "Boolean", "DateTime", "JSON", "AWSDateTime", "AWSJSON"]
}

/// What a stored field holds, without its list-ness or nullability.
package enum FieldType: Sendable, Equatable {
    case scalar(ScalarType)
    /// One value of the enum type with this name.
    case enumeration(String)

    /// The type's SDL name.
    package var name: String {
        switch self {
        case .scalar(let scalar): scalar.rawValue
        case .enumeration(let name): name
        }
    }
}

/// One stored field (a column).
package struct DataField: Sendable, Equatable {
    /// The field's name.
    package var name: String
    /// What one value is.
    package var type: FieldType
    /// `[T]`: a list of scalars or enum values.
    package var isList: Bool
    /// `T!`; for a list, the list itself is required.
    package var isRequired: Bool
    /// The `@default` value, converted to the field's type and checked; a create without the field stores it.
    package var defaultValue: JSONValue?
    /// Set by the server, never by a client: `id`, `createdAt`, `updatedAt`, `_version`, and an added `owner`.
    package var isAutomatic: Bool

    package init(
        name: String, type: FieldType, isList: Bool = false, isRequired: Bool = false, defaultValue: JSONValue? = nil, isAutomatic: Bool = false
    ) {
        self.name = name
        self.type = type
        self.isList = isList
        self.isRequired = isRequired
        self.defaultValue = defaultValue
        self.isAutomatic = isAutomatic
    }

    /// The type as SDL writes it, such as `String!` or `[Tag]`, for messages and plan summaries.
    package var typeDescription: String {
        (isList ? "[\(type.name)]" : type.name) + (isRequired ? "!" : "")
    }

    /// The record's id, which the server assigns.
    package static let id = DataField(name: "id", type: .scalar(.id), isRequired: true, isAutomatic: true)
    /// When the record was created.
    package static let createdAt = DataField(name: "createdAt", type: .scalar(.dateTime), isRequired: true, isAutomatic: true)
    /// When the record last changed.
    package static let updatedAt = DataField(name: "updatedAt", type: .scalar(.dateTime), isRequired: true, isAutomatic: true)
    /// The signed-in user who created the record; optional because a record written with an admin token has none.
    package static let owner = DataField(name: "owner", type: .scalar(.string), isAutomatic: true)
    /// The record's version, which each write increments, for conflict checks.
    package static let version = DataField(name: "_version", type: .scalar(.int), isRequired: true, isAutomatic: true)
}

/// A declared index: records with the same partition key, in sort-key order, so a list by room comes back sorted.
package struct DataIndex: Sendable, Equatable {
    /// The index's name, unique in its model (`byRoom`).
    package var name: String
    /// The field carrying `@index`.
    package var partitionKey: String
    /// The fields that order records within a partition, most significant first.
    package var sortKeys: [String]

    package init(name: String, partitionKey: String, sortKeys: [String] = []) {
        self.name = name
        self.partitionKey = partitionKey
        self.sortKeys = sortKeys
    }
}

/// A relation field: not a column, but a way to reach related records through an id field.
package struct DataRelation: Sendable, Equatable {
    /// Which side of the relation this field is.
    package enum Kind: Sendable, Equatable {
        /// This model holds the related record's id (`Message.room`).
        case belongsTo
        /// The related model holds this record's id (`Room.messages`).
        case hasMany
    }

    /// The relation field on this model, such as `room` or `messages`.
    package var field: String
    /// Which side of the relation this is.
    package var kind: Kind
    /// The related model's name.
    package var target: String
    /// For `belongsTo`, the field on this model holding the target's id (`roomId`); for `hasMany`, the field on the
    /// target holding this model's id.
    package var references: String

    package init(field: String, kind: Kind, target: String, references: String) {
        self.field = field
        self.kind = kind
        self.target = target
        self.references = references
    }
}

/// What a request does to records, as access rules name it.
package enum DataOperation: String, Sendable, Equatable, Codable, CaseIterable {
    case create, read, update, delete
}

/// One `@auth` rule: who it lets in, for which operations, and on which record it is checked.
package struct AuthRule: Sendable, Equatable {
    /// Who the rule lets in.
    package enum Allow: Sendable, Equatable {
        /// The user whose id is in the `String` field `field`.
        case owner(field: String)
        /// Any user whose id is in the `[String]` field `field`.
        case owners(field: String)
        /// Members of any of these groups.
        case groups([String])
        /// Any signed-in user (Amplify's `private`).
        case signedIn
        /// Any caller presenting the app's API key, signed in or not (Amplify's `public`; a session alone is not enough,
        /// as in AppSync's `API_KEY` mode).
        case anyone
    }

    /// Who the rule lets in.
    package var allow: Allow
    /// The operations it allows; all four when the rule does not say.
    package var operations: Set<DataOperation>
    /// A `belongsTo` relation field of this model: the rule is checked on the related record (a message is readable
    /// by the members of its room), and its owner field is the related model's.
    package var via: String?

    package init(allow: Allow, operations: Set<DataOperation> = Set(DataOperation.allCases), via: String? = nil) {
        self.allow = allow
        self.operations = operations
        self.via = via
    }
}
