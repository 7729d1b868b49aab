import Foundation
import KizunaCore
import Testing

@testable import KizunaServer

/// The plan between two schema versions: which steps each kind of change makes, which of them lose data, and the
/// order they apply in.
@Suite("Schema plan")
struct SchemaPlanTests {
    /// One step, as a row of the table.
    struct Step: Equatable, Sendable, CustomStringConvertible {
        let action: SchemaChange.Action
        let model: String
        let name: String?
        let isDestructive: Bool

        init(_ action: SchemaChange.Action, _ model: String, _ name: String? = nil, destructive: Bool = false) {
            self.action = action
            self.model = model
            self.name = name
            self.isDestructive = destructive
        }

        init(_ change: SchemaChange) {
            self.init(change.action, change.model, change.field ?? change.index, destructive: change.isDestructive)
        }

        var description: String { "\(action.rawValue) \(model)\(name.map { ".\($0)" } ?? "")\(isDestructive ? " (destructive)" : "")" }
    }

    /// A change between two versions of a schema and the steps it must plan.
    struct Case: CustomTestStringConvertible, Sendable {
        let name: String
        let old: String
        let new: String
        let steps: [Step]
        var testDescription: String { name }
    }

    static let message = "type Message @model { text: String! }"

    static let cases: [Case] = [
        Case(name: "no change plans nothing", old: message, new: message, steps: []),
        Case(
            name: "a new model is created", old: message, new: message + " type Room @model { name: String }",
            steps: [Step(.createModel, "Room")]),
        Case(
            name: "a new optional field is added", old: message, new: "type Message @model { text: String! editedAt: DateTime }",
            steps: [Step(.addField, "Message", "editedAt")]),
        Case(
            name: "a new required field with a default is added",
            old: message, new: #"type Message @model { text: String! pinned: Boolean! @default(value: "false") }"#,
            steps: [Step(.addField, "Message", "pinned")]),
        Case(
            name: "a new required field without a default is destructive", old: message, new: "type Message @model { text: String! roomId: ID! }",
            steps: [Step(.addField, "Message", "roomId", destructive: true)]),
        Case(
            name: "a new index is added", old: "type Message @model { roomId: ID }",
            new: #"type Message @model { roomId: ID @index(name: "byRoom") }"#,
            steps: [Step(.addIndex, "Message", "byRoom")]),
        Case(
            name: "a dropped index loses no data", old: #"type Message @model { roomId: ID @index(name: "byRoom") }"#,
            new: "type Message @model { roomId: ID }",
            steps: [Step(.dropIndex, "Message", "byRoom")]),
        Case(
            name: "an index whose keys change is dropped and added again",
            old: #"type Message @model { roomId: ID @index(name: "byRoom") }"#,
            new: #"type Message @model { roomId: ID @index(name: "byRoom", sortKeyFields: ["createdAt"]) }"#,
            steps: [Step(.dropIndex, "Message", "byRoom"), Step(.addIndex, "Message", "byRoom")]),
        Case(
            name: "a field becoming optional is additive", old: message, new: "type Message @model { text: String }",
            steps: [Step(.changeField, "Message", "text")]),
        Case(
            name: "a field becoming required without a default is destructive", old: "type Message @model { text: String }", new: message,
            steps: [Step(.changeField, "Message", "text", destructive: true)]),
        Case(
            name: "a field becoming required with a default is additive", old: "type Message @model { text: String }",
            new: #"type Message @model { text: String! @default(value: "") }"#,
            steps: [Step(.changeField, "Message", "text")]),
        Case(
            name: "a field's type changing is destructive", old: message, new: "type Message @model { text: Int! }",
            steps: [Step(.changeField, "Message", "text", destructive: true)]),
        Case(
            name: "a field becoming a list is destructive", old: message, new: "type Message @model { text: [String]! }",
            steps: [Step(.changeField, "Message", "text", destructive: true)]),
        Case(
            name: "a dropped field is destructive", old: "type Message @model { text: String! draft: Boolean }", new: message,
            steps: [Step(.dropField, "Message", "draft", destructive: true)]),
        Case(
            name: "a dropped model is destructive", old: message + " type Room @model { name: String }", new: message,
            steps: [Step(.dropModel, "Room", destructive: true)]),
        Case(
            name: "a new enum value is additive", old: "enum Kind { TEXT } type Message @model { kind: Kind }",
            new: "enum Kind { TEXT IMAGE } type Message @model { kind: Kind }",
            steps: [Step(.changeEnum, "Kind")]),
        Case(
            name: "a removed enum value is destructive", old: "enum Kind { TEXT IMAGE } type Message @model { kind: Kind }",
            new: "enum Kind { TEXT } type Message @model { kind: Kind }",
            steps: [Step(.changeEnum, "Kind", destructive: true)]),
        Case(
            name: "changed access rules are additive", old: message, new: "type Message @model @auth(rules: [{allow: private}]) { text: String! }",
            steps: [Step(.changeRules, "Message")]),
        Case(
            name: "an owner rule adds the owner field it needs", old: message,
            new: "type Message @model @auth(rules: [{allow: owner}]) { text: String! }",
            steps: [Step(.addField, "Message", "owner"), Step(.changeRules, "Message")]),
        Case(
            name: "changed relations are additive",
            old: "type Room @model { name: String } type Message @model { roomId: ID }",
            new: "type Room @model { name: String } type Message @model { roomId: ID room: Room @belongsTo }",
            steps: [Step(.changeRelations, "Message")]),
    ]

    @Test(arguments: cases)
    func eachKindOfChangePlansItsSteps(_ planned: Case) throws {
        let plan = SchemaPlan(from: try DataSchema(sdl: planned.old), to: try DataSchema(sdl: planned.new))
        #expect(plan.changes.map(Step.init) == planned.steps, "\(plan.changes.map(\.summary))")
        #expect(plan.isDestructive == planned.steps.contains { $0.isDestructive })
    }

    @Test func stepsApplyCreatesThenAddsThenIndexesThenDrops() throws {
        let old = try DataSchema(
            sdl: #"""
                type A @model { x: String y: Int @index(name: "byY") }
                type Gone @model { a: String }
                """#)
        let new = try DataSchema(
            sdl: #"""
                type A @model { x: String z: Int @index(name: "byZ") }
                type B @model { b: String }
                """#)
        let plan = SchemaPlan(from: old, to: new)
        #expect(
            plan.changes.map(Step.init) == [
                Step(.createModel, "B"),
                Step(.addField, "A", "z"),
                Step(.dropIndex, "A", "byY"),
                Step(.addIndex, "A", "byZ"),
                Step(.dropField, "A", "y", destructive: true),
                Step(.dropModel, "Gone", destructive: true),
            ])
        #expect(plan.isDestructive)
        #expect(SchemaPlan(from: old, to: new) == plan, "the same schemas always give the same plan")
    }

    @Test func publishingTheFirstSchemaCreatesEveryModel() throws {
        let plan = SchemaPlan(from: .empty, to: try DataSchema(sdl: DataSchemaTests.chat))
        #expect(plan.changes.map(Step.init) == [Step(.createModel, "Room"), Step(.createModel, "Message"), Step(.changeEnum, "MessageKind")])
        #expect(!plan.isDestructive)
    }

    @Test func summariesAreSentencesForPeople() throws {
        let old = try DataSchema(sdl: "type Message @model { text: String! }")
        let new = try DataSchema(sdl: #"type Message @model { text: String! editedAt: DateTime kind: Int! @default(value: "1") }"#)
        #expect(
            SchemaPlan(from: old, to: new).changes.map(\.summary) == [
                "Add optional field Message.editedAt: DateTime",
                "Add required field Message.kind: Int! = 1",
            ])
        #expect(
            SchemaPlan(from: new, to: old).changes.map(\.summary) == [
                "Drop field Message.editedAt and its values",
                "Drop field Message.kind and its values",
            ])
    }

    @Test func aPlanRoundTripsThroughJSON() throws {
        let plan = SchemaPlan(from: try DataSchema(sdl: "type A @model { x: String }"), to: try DataSchema(sdl: "type B @model { y: String }"))
        let decoded = try JSONDecoder().decode(SchemaPlan.self, from: try JSONEncoder().encode(plan))
        #expect(decoded == plan)
        #expect(decoded.changes.map(\.action) == [.createModel, .dropModel])
    }
}
