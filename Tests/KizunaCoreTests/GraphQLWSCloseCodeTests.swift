import KizunaCore
import Testing

/// Every close code of a `graphql-transport-ws` connection: its number, the reason it is sent with, and whether
/// graphql-ws's client gives up after it.
@Suite("graphql-transport-ws close codes")
struct GraphQLWSCloseCodeTests {
    struct Row: CustomTestStringConvertible, Sendable {
        let code: GraphQLWSCloseCode
        let rawValue: UInt16
        let reason: String
        let fatal: Bool
        var testDescription: String { "\(rawValue)" }
    }

    static let rows: [Row] = [
        Row(code: .normalClosure, rawValue: 1000, reason: "Normal Closure", fatal: false),
        Row(code: .goingAway, rawValue: 1001, reason: "Going away", fatal: false),
        Row(code: .invalidMessage, rawValue: 4400, reason: "Invalid message received", fatal: true),
        Row(code: .unauthorized, rawValue: 4401, reason: "Unauthorized", fatal: true),
        Row(code: .forbidden, rawValue: 4403, reason: "Forbidden", fatal: false),
        Row(code: .subprotocolNotAcceptable, rawValue: 4406, reason: "Subprotocol not acceptable", fatal: true),
        Row(code: .connectionInitialisationTimeout, rawValue: 4408, reason: "Connection initialisation timeout", fatal: false),
        Row(code: .subscriberAlreadyExists, rawValue: 4409, reason: "Subscriber already exists", fatal: true),
        Row(code: .tooManyInitialisationRequests, rawValue: 4429, reason: "Too many initialisation requests", fatal: true),
        Row(code: .internalServerError, rawValue: 4500, reason: "Internal server error", fatal: true),
        Row(code: .badResponse, rawValue: 4004, reason: "Bad response", fatal: true),
        Row(code: .internalClientError, rawValue: 4005, reason: "Internal client error", fatal: true),
        Row(code: .terminated, rawValue: 4499, reason: "Terminated", fatal: false),
        Row(code: .connectionAcknowledgementTimeout, rawValue: 4504, reason: "Connection acknowledgement timeout", fatal: false),
        Row(code: .fellBehind, rawValue: 4410, reason: "Fell behind: resume from your last seq", fatal: false),
        Row(code: .keepAliveTimeout, rawValue: 4411, reason: "Keep-alive timeout: ping not answered", fatal: false),
    ]

    @Test(arguments: rows)
    func hasItsNumberReasonAndFatality(_ row: Row) {
        #expect(row.code.rawValue == row.rawValue)
        #expect(GraphQLWSCloseCode(rawValue: row.rawValue) == row.code)
        #expect(row.code.defaultReason == row.reason)
        #expect(row.code.isFatal == row.fatal)
        #expect(row.code.description == "\(row.rawValue) (\(row.reason))")
    }

    @Test func kizunasOwnCodesAreNumbersGraphQLWSDoesNotUse() {
        let graphQLWS: Set<UInt16> = [4004, 4005, 4400, 4401, 4403, 4406, 4408, 4409, 4429, 4499, 4500, 4504]
        for code in [GraphQLWSCloseCode.fellBehind, .keepAliveTimeout] {
            #expect(!graphQLWS.contains(code.rawValue))
            #expect((4000...4999).contains(code.rawValue))
        }
    }

    @Test func webSocketCodesAreFatalButTheOnesAReconnectCanCure() {
        for code: UInt16 in [1002, 1003, 1007, 1008, 1009, 1010, 1011] {
            #expect(GraphQLWSCloseCode(rawValue: code).isFatal, "\(code)")
        }
        for code: UInt16 in [1000, 1001, 1005, 1006, 1012, 1013, 1014, 4000, 4999] {
            #expect(!GraphQLWSCloseCode(rawValue: code).isFatal, "\(code)")
        }
        #expect(GraphQLWSCloseCode(rawValue: 1006).defaultReason == "")
        #expect(GraphQLWSCloseCode(rawValue: 1006).description == "1006")
    }

    @Test func aReasonTooLongForACloseFrameFallsBackToTheDefault() {
        let fits = String(repeating: "a", count: 123)
        #expect(GraphQLWSCloseCode.invalidMessage.fitting(fits) == fits)
        #expect(GraphQLWSCloseCode.invalidMessage.fitting(fits + "a") == "Invalid message received")
        // Bytes, not characters: 62 two-byte characters are 124 bytes.
        #expect(GraphQLWSCloseCode.subscriberAlreadyExists.fitting(String(repeating: "é", count: 62)) == "Subscriber already exists")
        #expect(GraphQLWSCloseCode.forbidden.fitting("") == "")
    }
}
