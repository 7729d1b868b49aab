import KizunaCore
import NIOCore
import Testing

@testable import KizunaServer

/// The `next` message the hub writes with a payload's JSON text spliced in is byte for byte the one
/// ``GraphQLWSMessage`` would write: clients cannot tell which path made it.
@Suite("graphql-transport-ws frames")
struct GraphQLWSFrameWriterTests {
    static let payloads: [JSONValue] = [
        ["data": ["onCreateNote": ["id": "n1", "text": "hé \"quoted\" \\ 🦊"]], "extensions": ["seq": "42"]],
        ["data": nil, "errors": [["message": "No.", "path": ["onCreateNote", "room"]]], "extensions": ["seq": "7"]],
        [:],
    ]

    @Test(arguments: ["1", "a\"b\\c", "ünï 🦊", "0f8e3c1a-3b7e-4c55-9d0f-2a1b6c7d8e9f"])
    func aSplicedNextIsTheMessagesOwnText(id: String) {
        for payload in Self.payloads {
            let spliced = GraphQLWSFrameWriter.next(id: id, payload: payload.jsonBytes)
            let written = GraphQLWSMessage.next(id: id, payload: payload.objectValue ?? [:]).json.jsonBytes
            #expect(Array(spliced.readableBytesView) == written, "\(id) \(payload)")
        }
    }
}
