import ArgumentParser
import KizunaServer

/// `kizuna serve`'s limits on data API (GraphQL) requests: flags, then `KIZUNA_GRAPHQL_*` variables, then
/// ``GraphQLLimits``'s defaults.
struct GraphQLLimitOptions: ParsableArguments {
    @Option(
        name: .customLong("graphql-max-depth"),
        help: """
            Fields nested in fields in a GraphQL document, counted through fragments; introspection is exempt. \
            Env: KIZUNA_GRAPHQL_MAX_DEPTH. Default: 10.
            """
    )
    var maxDepth: Int?

    @Option(
        name: .customLong("graphql-max-cost"),
        help: """
            The most a GraphQL operation may cost: each field 1, and a list field multiplies what it selects by its \
            limit (100 when not given). Env: KIZUNA_GRAPHQL_MAX_COST. Default: 50000.
            """
    )
    var maxCost: Int?

    @Option(name: .customLong("graphql-max-aliases"), help: "Aliased fields in a GraphQL document. Env: KIZUNA_GRAPHQL_MAX_ALIASES. Default: 30.")
    var maxAliases: Int?

    @Option(
        name: .customLong("graphql-max-mutations"),
        help: "Mutations in one GraphQL request, as a client's outbox sends them. Env: KIZUNA_GRAPHQL_MAX_MUTATIONS. Default: 25."
    )
    var maxMutations: Int?

    @Option(
        name: .customLong("graphql-max-document-size"),
        help: """
            Largest GraphQL query text in bytes; variables are bounded by --max-body-size alone. \
            Env: KIZUNA_GRAPHQL_MAX_DOCUMENT_SIZE. Default: 65536.
            """
    )
    var maxDocumentSize: Int?

    /// The limits these flags and `environment` ask for.
    /// - Throws: `ValidationError` naming the variable of a value that is not a number or out of range.
    func limits(_ environment: Environment) throws -> GraphQLLimits {
        var limits = GraphQLLimits()
        limits.maximumDepth = try environment.integer(maxDepth, "KIZUNA_GRAPHQL_MAX_DEPTH", limits.maximumDepth, range: 1...100)
        limits.maximumCost = try environment.integer(maxCost, "KIZUNA_GRAPHQL_MAX_COST", limits.maximumCost, range: 1...1_000_000_000)
        limits.maximumAliases = try environment.integer(maxAliases, "KIZUNA_GRAPHQL_MAX_ALIASES", limits.maximumAliases, range: 0...10_000)
        limits.maximumMutationsPerRequest = try environment.integer(
            maxMutations, "KIZUNA_GRAPHQL_MAX_MUTATIONS", limits.maximumMutationsPerRequest, range: 1...1000)
        limits.maximumDocumentBytes = try environment.integer(
            maxDocumentSize, "KIZUNA_GRAPHQL_MAX_DOCUMENT_SIZE", limits.maximumDocumentBytes, range: 1024...(1 << 30))
        return limits
    }
}
