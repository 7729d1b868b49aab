import Foundation

/// The body of `POST /v1/admin/apps/{app}/graphql`: a GraphQL document an operator runs against the app's live data
/// API, as the app would through `POST /v1/apps/{app}/graphql`, with the same limits and the same answer.
///
/// Without ``asUser`` the operator passes every access rule and sees every record; with it, the document runs as that
/// account would, its groups included, so an operator can check what a rule lets a user see.
public struct DataQueryRequest: Sendable, Codable, Hashable {
    /// The GraphQL document.
    public var query: String
    /// The values of the document's variables.
    public var variables: [String: JSONValue]?
    /// Which operation of the document to run, when it has several.
    public var operationName: String?
    /// The account to run as: its id (`usr_…`) or its identifier, as `kizuna user` commands take it; `nil` for the
    /// operator. An account that does not exist is `not_found`.
    public var asUser: String?

    public init(query: String, variables: [String: JSONValue]? = nil, operationName: String? = nil, asUser: String? = nil) {
        self.query = query
        self.variables = variables
        self.operationName = operationName
        self.asUser = asUser
    }
}
