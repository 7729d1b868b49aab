import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import Testing

@testable import KizunaServer

/// An app's Data pages over HTTP: the schema, a model's records filtered and paged, and a record's form saved at its
/// version, a change made meanwhile shown beside the operator's values.
@Suite("Admin console: data")
struct ConsoleDataTests {
    static let schema = """
        enum Mood { HAPPY SAD }

        type Task @model @auth(rules: [{ allow: private }]) {
          title: String!
          done: Boolean
          points: Int
          mood: Mood
          tags: [String]
        }
        """

    static func create(_ server: TestServer, _ title: String, points: Int) async throws -> String {
        let (status, body) = try await OperatorQueryTests.query(
            server, "mutation($input: CreateTaskInput!) { createTask(input: $input) { id } }",
            variables: ["input": ["title": .string(title), "points": .number(Double(points)), "tags": ["a", "<b>"]]])
        #expect(status == .ok, "\(body)")
        return try #require(body["data"]?["createTask"]?["id"]?.stringValue, "\(body)")
    }

    @Test(arguments: TestBackend.available)
    func recordsAreBrowsedFilteredPagedAndEditedAtTheirVersion(_ backend: TestBackend) async throws {
        try await withTestServer(backend) { server in
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            var browser = ConsoleClient(server)
            try await browser.signIn()
            #expect(try await browser.get("/console/apps/shop/data").text.contains("No data schema published yet"))
            #expect(try await DataSchemaPublishingTests.publish(server, Self.schema).status == .ok)
            var ids: [String] = []
            for index in 0..<(ConsoleController.recordsPerPage + 2) { ids.append(try await Self.create(server, "task \(index)", points: index)) }

            // The schema: models linked, fields with their types, the SDL, the history.
            let overview = try await browser.get("/console/apps/shop/data")
            #expect(overview.text.contains(#"<a href="/console/apps/shop/data/Task">Task</a>"#))
            #expect(overview.text.contains(#"<code>points</code> <span class="hint">Int</span>"#) && overview.text.contains("enum Mood"))

            // Newest first, a page at a time; the next page holds the rest.
            let first = try await browser.get("/console/apps/shop/data/Task")
            #expect(first.status == .ok && first.text.contains(">task 51<") && !first.text.contains(">task 1<"))
            #expect(first.text.contains(#"<td>[&quot;a&quot;,&quot;&lt;b&gt;&quot;]</td>"#), "lists shown as JSON, escaped")
            let nextLink = try #require(first.text.range(of: #"rel="next""#).map { first.text[..<$0.lowerBound] })
            let href = String(nextLink[nextLink.range(of: #"<a href=""#, options: .backwards)!.upperBound...].prefix { $0 != "\"" })
            let second = try await browser.get(href.replacingOccurrences(of: "&amp;", with: "&"))
            #expect(second.text.contains(">task 1<") && second.text.contains(">task 0<") && !second.text.contains(#"rel="next""#))

            // A filter, typed as its field takes it; a value that is not one is shown at the field.
            let filtered = try await browser.get("/console/apps/shop/data/Task?field=points&op=ge&value=50&order=oldest")
            #expect(filtered.text.contains(">task 50<") && filtered.text.contains(">task 51<") && !filtered.text.contains(">task 49<"))
            let bad = try await browser.get("/console/apps/shop/data/Task?field=points&op=ge&value=many")
            #expect(bad.status == .badRequest && bad.text.contains(#"id="value-errors""#) && bad.text.contains("is not a whole number"))
            #expect(try await browser.get("/console/apps/shop/data/Nothing").status == .notFound)

            // A record's form, saved at its version.
            let path = "/console/apps/shop/data/Task/\(ids[0])"
            let csrf = try await browser.csrf(on: path)
            let form = try await browser.get(path)
            #expect(form.text.contains(#"<input type="hidden" name="_version" value="1">"#))
            #expect(
                form.text.contains(
                    #"<select id="field-mood" name="field-mood"><option value="" selected>null</option><option value="HAPPY">HAPPY</option>"#))
            var fields = [
                "csrf": csrf, "_version": "1", "field-title": "renamed", "field-done": "true", "field-points": "7", "field-mood": "HAPPY",
                "field-tags": #"["x"]"#,
            ]
            let saved = try await browser.post(path, fields)
            #expect(saved.status == .seeOther && saved.headers[.location] == "\(path)?notice=saved")
            let stored = try await OperatorQueryTests.query(server, #"{ getTask(id: "\#(ids[0])") { title done points mood tags _version } }"#).body
            #expect(stored["data"]?["getTask"] == ["title": "renamed", "done": true, "points": 7, "mood": "HAPPY", "tags": ["x"], "_version": 2])

            // A value of the wrong type is refused at its field, nothing saved.
            let wrong = try await browser.post(path, fields.merging(["_version": "2", "field-points": "seven"]) { $1 })
            #expect(wrong.status == .badRequest && wrong.text.contains(#"id="field-points-errors""#))

            // A form from version 1 again: the change made meanwhile is shown beside these values, which are kept.
            fields["field-title"] = "stale"
            let conflict = try await browser.post(path, fields)
            #expect(conflict.status == .conflict && conflict.text.contains("This record changed since you opened it"))
            #expect(conflict.text.contains(#"<tr class="changed"><th scope="row">title</th><td>stale</td><td>renamed</td></tr>"#))
            #expect(conflict.text.contains(#"name="_version" value="2""#) && conflict.text.contains(#"value="stale""#))
            let overwritten = try await browser.post(path, fields.merging(["_version": "2"]) { $1 })
            #expect(overwritten.status == .seeOther)
        }
    }
}
