@testable import KizunaServer

/// The matrix of what each caller may do to each model's existing rows, as the SQL condition decides it.
extension DataAuthorizationTests {
    /// What one caller may do to one model's existing rows: the ids the SQL condition lets through (deleted rows
    /// too), or `nil` when the caller is denied outright.
    struct Case: Sendable {
        var caller: String
        var model: String
        var operations: [DataOperation]
        var ids: [String]?

        init(_ caller: String, _ model: String, _ operations: [DataOperation], _ ids: [String]?) {
            self.caller = caller
            self.model = model
            self.operations = operations
            self.ids = ids
        }
    }

    static let everyOperation: [DataOperation] = [.read, .update, .delete]
    static let allRooms = ["r1", "r2", "r3", "r4", "r5"]
    static let allNotices = ["x1", "x2"]

    /// The whole matrix: every caller, model and operation, once.
    static let cases: [Case] = [
        Case("alice", "Room", everyOperation, ["r1", "r3"]),
        Case("alice", "Message", [.read], ["m1", "m2", "m6"]),
        Case("alice", "Message", [.update, .delete], ["m1"]),
        Case("alice", "Note", everyOperation, ["n1"]),
        Case("alice", "Notice", [.read], allNotices),
        Case("alice", "Notice", [.update, .delete], nil),
        Case("alice", "Secret", everyOperation, nil),

        Case("bob", "Room", everyOperation, ["r1", "r2"]),
        Case("bob", "Message", [.read], ["m1", "m2", "m3", "m4", "m6"]),
        Case("bob", "Message", [.update, .delete], ["m2", "m3", "m4"]),
        Case("bob", "Note", everyOperation, []),
        Case("bob", "Notice", [.read], allNotices),
        Case("bob", "Notice", [.update, .delete], nil),
        Case("bob", "Secret", everyOperation, nil),

        Case("carol", "Room", everyOperation, []),
        Case("carol", "Message", everyOperation, ["m5"]),
        Case("carol", "Note", everyOperation, ["n2"]),
        Case("carol", "Notice", [.read], allNotices),
        Case("carol", "Notice", [.update, .delete], nil),
        Case("carol", "Secret", everyOperation, nil),

        Case("dave", "Room", everyOperation, []),
        Case("dave", "Message", everyOperation, []),
        Case("dave", "Note", everyOperation, []),
        Case("dave", "Notice", [.read], allNotices),
        Case("dave", "Notice", [.update, .delete], nil),
        Case("dave", "Secret", everyOperation, nil),

        Case("quoted", "Room", everyOperation, ["r2"]),
        Case("quoted", "Message", [.read], ["m3"]),
        Case("quoted", "Message", [.update, .delete], []),
        Case("quoted", "Note", everyOperation, []),
        Case("quoted", "Notice", [.read], allNotices),
        Case("quoted", "Notice", [.update, .delete], nil),
        Case("quoted", "Secret", everyOperation, nil),

        Case("moderator", "Room", everyOperation, allRooms),
        Case("moderator", "Message", everyOperation, []),
        Case("moderator", "Note", everyOperation, []),
        Case("moderator", "Notice", [.read], allNotices),
        Case("moderator", "Notice", [.update, .delete], nil),
        Case("moderator", "Secret", everyOperation, nil),

        Case("admin", "Room", everyOperation, []),
        Case("admin", "Message", everyOperation, []),
        Case("admin", "Note", everyOperation, []),
        Case("admin", "Notice", everyOperation, allNotices),
        Case("admin", "Secret", everyOperation, nil),

        Case("apiKey", "Room", everyOperation, nil),
        Case("apiKey", "Message", everyOperation, nil),
        Case("apiKey", "Note", everyOperation, nil),
        Case("apiKey", "Notice", [.read], allNotices),
        Case("apiKey", "Notice", [.update, .delete], nil),
        Case("apiKey", "Secret", everyOperation, nil),

        Case("anonymous", "Room", everyOperation, nil),
        Case("anonymous", "Message", everyOperation, nil),
        Case("anonymous", "Note", everyOperation, nil),
        Case("anonymous", "Notice", everyOperation, nil),
        Case("anonymous", "Secret", everyOperation, nil),

        Case("groupsWithoutUser", "Room", everyOperation, nil),
        Case("groupsWithoutUser", "Message", everyOperation, nil),
        Case("groupsWithoutUser", "Note", everyOperation, nil),
        Case("groupsWithoutUser", "Notice", everyOperation, nil),
        Case("groupsWithoutUser", "Secret", everyOperation, nil),
    ]
}
