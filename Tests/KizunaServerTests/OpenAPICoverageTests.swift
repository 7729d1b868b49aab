import Foundation
import HTTPTypes
import Hummingbird
import Testing

@testable import KizunaServer

@Suite("openapi.yaml")
struct OpenAPICoverageTests {
    /// Every route the router serves (Hummingbird's own list) must be described, and nothing described may be missing
    /// from the server.
    @Test func describesExactlyTheRegisteredRoutes() async throws {
        try await withTestStore(.sqlite) { store in
            let parts = try await ServerParts(configuration: KizunaConfiguration(port: 0, database: store.location))
            // The data API is GraphQL, described by its own schema (introspection, GET …/schema.graphql), not here.
            let graphQL: Set = ["post /v1/apps/{app}/graphql"]
            let registered = Set(parts.router.routes.map { "\($0.method.rawValue.lowercased()) \($0.path)" }).subtracting(graphQL)
            await parts.database.shutdown()

            let document = String(decoding: try OpenAPIDocument.bytes(), as: UTF8.self)
            let described = Self.operations(in: document)
            #expect(registered.subtracting(described).sorted() == [], "routes missing from openapi.yaml")
            #expect(described.subtracting(registered).sorted() == [], "openapi.yaml describes routes the server lacks")
        }
    }

    /// `method path` for each operation under `paths:` (two-space path keys, four-space method keys).
    static func operations(in yaml: String) -> Set<String> {
        var result = Set<String>()
        var inPaths = false
        var path: String?
        let methods: Set<String> = ["get", "put", "post", "delete", "patch", "head", "options"]
        for line in yaml.split(separator: "\n", omittingEmptySubsequences: false) {
            if !line.hasPrefix(" ") && !line.isEmpty { inPaths = line.hasPrefix("paths:"); continue }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), !line.hasPrefix("   ") {
                path = String(line.dropFirst(2).dropLast())  // "  /v1/x:" -> "/v1/x"
            } else if line.hasPrefix("    "), !line.hasPrefix("     "), let path {
                let key = line.trimmingCharacters(in: .whitespaces).dropLast()
                if methods.contains(String(key)) { result.insert("\(key) \(path)") }
            }
        }
        return result
    }
}
