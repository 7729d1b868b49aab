import GraphQL
import KizunaCore
import OrderedCollections
import Synchronization

extension DataRuntime {
    /// The resolver of `onCreateX`, `onUpdateX` and `onDeleteX`.
    ///
    /// A delivery executes the subscriber's document with the changed record as the root value (GraphQL's
    /// "execute subscription event" step, done by ``SubscriptionMatcher`` per change), so the field answers that
    /// record, with the relations its selection asks for loaded as `getX` loads them. Executed with a
    /// ``SubscriptionProbe`` as the root value, it gives the probe its arguments instead (how
    /// ``SubscriptionRequest`` reads them). Posted over HTTP, where no record is there to answer, it is an error.
    func subscriptionResolver(_ model: DataModel) -> GraphQLFieldResolve {
        { source, args, context, info in
            if let probe = source as? SubscriptionProbe {
                probe.keep(args)
                return nil
            }
            guard let record = source as? RelationLoader.Record else {
                throw KizunaError(.badRequest, "Subscriptions are served over the data API's WebSocket (graphql-transport-ws), not with POST.")
            }
            let request = try DataRequest.from(context)
            return await RelationLoader(runtime: self, request: request, info: info).loaded(record, of: model, selectedBy: info.fieldASTs)
        }
    }
}

/// The root value of a subscription document executed once when it is subscribed: the root field's resolver hands it
/// the field's arguments, as GraphQL coerced them, and answers nothing.
final class SubscriptionProbe: Sendable {
    private let kept = Mutex<Map>(.dictionary([:]))

    /// The root field's arguments; empty until the field ran.
    var arguments: Map { kept.withLock { $0 } }

    func keep(_ arguments: Map) {
        kept.withLock { $0 = arguments }
    }
}
