import Crypto
import KizunaCore
import Testing

@testable import KizunaServer

/// The `nextToken`: it reads back as the cursor it was made from, and anything else — altered, cut short, signed
/// with another key, or issued for another query — is `bad_cursor`.
@Suite("Page cursor")
struct PageCursorTests {
    static let key = SymmetricKey(size: .bits256)
    static let cursor = PageCursor(
        model: "Note", order: "byRoom", descending: true, scope: PageCursor.scope(of: ["roomId": "r1"]),
        after: ["apple", "1738314000000", 1.5, true, "n01"])
    static let expecting = (
        model: PageCursorTests.cursor.model, order: PageCursorTests.cursor.order, descending: PageCursorTests.cursor.descending,
        scope: PageCursorTests.cursor.scope
    )

    @Test func aTokenReadsBackAsItsCursor() throws {
        let token = Self.cursor.encoded(key: Self.key)
        #expect(try PageCursor.decode(token, key: Self.key, expecting: Self.expecting) == Self.cursor)
        #expect(token.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }, "URL-safe as it is")
        #expect(Self.cursor.encoded(key: Self.key) == token)
    }

    @Test func theScopeIgnoresKeyOrderButNotValues() {
        #expect(PageCursor.scope(of: ["a": 1, "b": ["c": "d", "e": true]]) == PageCursor.scope(of: ["b": ["e": true, "c": "d"], "a": 1]))
        #expect(PageCursor.scope(of: ["filter": ["likes": ["eq": 1]]]) != PageCursor.scope(of: ["filter": ["likes": ["eq": 2]]]))
        #expect(PageCursor.scope(of: ["filter": nil]) != PageCursor.scope(of: ["filter": [:]]))
    }

    @Test func anAlteredTruncatedOrForeignTokenIsABadCursor() throws {
        let token = Self.cursor.encoded(key: Self.key)
        let parts = token.split(separator: ".").map(String.init)
        var later = Self.cursor
        later.after = ["banana", "1738314000001", 2.5, false, "n02"]
        let other = later.encoded(key: Self.key).split(separator: ".").map(String.init)
        var flipped = Array(parts[0])
        flipped[flipped.count / 2] = flipped[flipped.count / 2] == "A" ? "B" : "A"
        let forgeries = [
            String(flipped) + "." + parts[1],  // the payload changed
            parts[0] + "." + other[1],  // another token's MAC
            other[0] + "." + parts[1],
            String(token.dropLast(4)),  // cut short
            String(token.dropFirst(4)),
            parts[0],
            parts[0] + ".",
            "." + parts[1],
            token + "." + parts[1],
            token + "=",
            "",
            "not a token",
            String(repeating: "A", count: 5000),
            Self.cursor.encoded(key: SymmetricKey(size: .bits256)),  // another server's key
        ]
        for forged in forgeries {
            let error = #expect(throws: KizunaError.self, "\(forged)") {
                try PageCursor.decode(forged, key: Self.key, expecting: Self.expecting)
            }
            #expect(error?.code == .badCursor && error?.field == "nextToken", "\(forged)")
        }
    }

    @Test func aTokenFromAnotherQueryIsABadCursor() throws {
        let token = Self.cursor.encoded(key: Self.key)
        let others = [
            (model: "Room", order: "byRoom", descending: true, scope: Self.cursor.scope),
            (model: "Note", order: "", descending: true, scope: Self.cursor.scope),
            (model: "Note", order: "byRoom", descending: false, scope: Self.cursor.scope),
            (model: "Note", order: "byRoom", descending: true, scope: PageCursor.scope(of: ["roomId": "r2"])),
        ]
        for expecting in others {
            let error = #expect(throws: KizunaError.self) { try PageCursor.decode(token, key: Self.key, expecting: expecting) }
            #expect(error?.code == .badCursor && error?.field == "nextToken")
            #expect(error?.message.contains("another query") == true)
        }
    }
}
