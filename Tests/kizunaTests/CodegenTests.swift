import ArgumentParser
import Foundation
import KizunaClient
import KizunaCore
import Testing

@testable import KizunaServer
@testable import kizuna

/// `kizuna codegen swift`: the chat and TV schedule schemas' Swift is the checked-in `Examples/*/Generated` (which the
/// package builds as the `ChatAPI` and `TVScheduleAPI` targets, and the SDK tests run), byte for byte, however often
/// it is generated, from a file or from the schema live on a server.
@Suite("kizuna codegen swift")
struct CodegenTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../..").standardizedFileURL

    static func example(_ name: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent("Examples/\(name)/schema.graphql"), encoding: .utf8)
    }

    /// Runs `kizuna <arguments>` in-process, as the shell would.
    static func kizuna(_ arguments: [String]) async throws {
        let command = try Kizuna.parseAsRoot(arguments)
        guard var run = command as? any AsyncParsableCommand else { throw ValidationError("\(arguments) is not an async command") }
        try await run.run()
    }

    static func files(in directory: URL) throws -> [String: String] {
        var files: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() where name.hasSuffix(".swift") {
            files[name] = try String(contentsOf: directory.appendingPathComponent(name), encoding: .utf8)
        }
        return files
    }

    @Test(arguments: ["Examples/Chat", "Examples/TVSchedule", "Tests/CodegenFixture"])
    func aSchemasSwiftIsItsCheckedInFixtureEveryTime(_ folder: String) async throws {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("kizuna-codegen-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: output) }
        let schema = Self.root.appendingPathComponent("\(folder)/schema.graphql").path
        let fixture = try Self.files(in: Self.root.appendingPathComponent("\(folder)/Generated"))
        for _ in 0..<2 {
            try await Self.kizuna(["codegen", "swift", "--schema", schema, "-o", output.path])
            let generated = try Self.files(in: output)
            #expect(generated.keys.sorted() == ["Inputs.swift", "Models.swift", "Operations.swift"])
            for (name, text) in generated {
                // A difference means the generator or the schema changed: generate the fixture again, as its header says.
                #expect(text == fixture[name], "\(name) differs from \(folder)/Generated/\(name)")
            }
        }
    }

    @Test func theLiveSchemaGivesTheSameSwiftAsItsFile() async throws {
        try await CLIServer.run { server in
            _ = try await server.admin.createApp(NewApp(id: "chat", name: "Chat", platform: .ios, bundleId: "com.example.chat", teamId: "ABCDE12345"))
            let sdl = try Self.example("Chat")
            _ = try await server.admin.publish(.schema, app: "chat", document: SchemaDocument.document(sdl: sdl), message: nil, expecting: .any)
            let output = server.directory.appendingPathComponent("generated")
            try await server.kizuna(["codegen", "swift", "--app", "chat", "-o", output.path])
            let live = try Self.files(in: output)
            let fromFile = try SwiftCodegen(try DataSchema(sdl: sdl), source: "schema.graphql").files()
            for file in fromFile {
                let header = "from app chat's live schema."
                #expect(live[file.name]?.split(separator: "\n").first?.contains(header) == true)
                #expect(live[file.name]?.split(separator: "\n").dropFirst() == file.contents.split(separator: "\n").dropFirst())
            }
        }
    }

    @Test func everyIndexGetsATypedQueryWithItsSortKeyCondition() throws {
        let files = try SwiftCodegen(try DataSchema(sdl: Self.example("Conference")), source: "schema.graphql").files()
        let operations = try #require(files.first { $0.name == "Operations.swift" }?.contents)
        #expect(operations.contains("public static func listByDay(day: String, startsAt: KeyCondition<Date>? = nil, filter: JSONValue? = nil"))
        #expect(operations.contains("query ListTalksByDay($day: String!, $startsAt: ModelDateTimeKeyConditionInput"))
        #expect(operations.contains("public static func listBySpeaker(speakerId: String, startsAt: KeyCondition<Date>? = nil"))
    }

    @Test func aTypeThatWouldHideOneTheGeneratedCodeUsesIsRefused() throws {
        for name in ["Date", "SortDirection", "Bool"] {
            let schema = try DataSchema(sdl: "type \(name) @model { text: String }")
            #expect { try SwiftCodegen(schema, source: "schema.graphql").files() } throws: {
                ($0 as? KizunaError)?.code == .validationFailed && ($0 as? KizunaError)?.message.contains(name) == true
            }
        }
        let selfish = try DataSchema(sdl: "type Note @model { self: String }")
        #expect { try SwiftCodegen(selfish, source: "schema.graphql").files() } throws: { ($0 as? KizunaError)?.field == "Note.self" }
        #expect(
            SwiftCodegen.caseNames(["HAPPY", "happy", "IN_PROGRESS", "RAW_VALUE", "ALL_CASES", "UNKNOWN"]) == [
                "HAPPY", "happy", "inProgress", "RAW_VALUE", "ALL_CASES", "UNKNOWN",
            ])
    }

    @Test func badInputIsNamed() async throws {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("kizuna-codegen-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: output) }
        await #expect(throws: ValidationError.self) { try await Self.kizuna(["codegen", "swift", "-o", output.path]) }
        await #expect { try await Self.kizuna(["codegen", "swift", "--schema", "/nonexistent/schema.graphql", "-o", output.path]) } throws: {
            ($0 as? KizunaError)?.code == .notFound
        }
        let bad = output.appendingPathComponent("bad.graphql")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        try Data("type Note @model { text: Strin }".utf8).write(to: bad)
        await #expect { try await Self.kizuna(["codegen", "swift", "--schema", bad.path, "-o", output.path]) } throws: {
            ($0 as? KizunaError)?.code == .validationFailed
        }
    }
}
