import GraphQL
import Hummingbird
import KizunaCore
import Logging
import NIOCore
import Synchronization

extension GraphQLWSConnection {
    /// Checks a `connection_init` payload, as the HTTP endpoint checks headers: `authorization` (or `Authorization`)
    /// holding `Bearer <session token>`, and `x-api-key` (or `X-Api-Key`) holding an API key of the app. Either, both
    /// or neither may be there; one that is there must be valid, or the connection closes with 4403 and the error's
    /// code (`session_expired`, `api_key_revoked`, …) as the reason.
    func authenticate(_ payload: [String: JSONValue]?) async {
        let payload = payload ?? [:]
        let authorization = (payload["authorization"] ?? payload["Authorization"])?.stringValue
        let apiKey = (payload["x-api-key"] ?? payload["X-Api-Key"])?.stringValue
        let action: GraphQLWSServerStateMachine.Action
        do {
            let runtime = try await services.schemas.runtime(app)
            let (caller, session) = try await services.callers.connectionCaller(
                token: authorization.flatMap(Request.bearerToken(in:)), apiKey: apiKey, app: app, needsGroups: runtime.usesGroups)
            let (initTimer, recheck): (Scheduled<Void>?, Bool)
            (action, initTimer, recheck) = state.withLock { state in
                state.caller = caller
                state.session = session.map(Session.init)
                // Its wait is over: the timer and what it holds go (the connection may stay open for hours).
                defer { (state.initTimer, state.sessionEndedDuringCheck) = (nil, false) }
                return (state.machine.authorized(), state.initTimer, state.sessionEndedDuringCheck)
            }
            initTimer?.cancel()
            if let session, case .send = action {
                // Re-checked when its access token expires, and now if a session ended while it was being checked.
                scheduleSessionCheck(at: session.expiresAt)
                if recheck { recheckSessionInOrder() }
            }
        } catch let error as KizunaError {
            action = state.withLock { $0.machine.rejected(reason: error.code.rawValue) }
        } catch  where StoreFailure.isUnreachable(error) {
            // Not the client's fault, nor the server's for good: a client reconnects after a pause (graphql-ws's client
            // gives up after 4500).
            logger.warning("The store cannot be reached to check a connection_init", metadata: ["connection": "\(id)"])
            action = state.withLock { $0.machine.close(.tryAgainLater, reason: KizunaError.Code.storeUnavailable.rawValue) }
        } catch {
            logger.error("Checking a connection_init payload failed", metadata: ["connection": "\(id)", "error": "\(String(reflecting: error))"])
            action = state.withLock { $0.machine.close(.internalServerError) }
        }
        perform(action)
    }

    /// Starts an operation: a subscription is parsed and checked here, before the reader reads on, and handed to the
    /// drainer (``enqueueStart(_:)``); a query or mutation runs beside the reader and answers with `next` and `complete`.
    func start(_ subscription: Subscription, _ payload: GraphQLWSSubscribePayload) async {
        let runtime: DataRuntime
        do {
            runtime = try await services.schemas.runtime(app)
        } catch {
            await fail(subscription, error)
            return
        }
        let caller = state.withLock { $0.caller }
        guard isSubscription(payload, on: runtime) else {
            spawn { await self.answer(subscription, payload, runtime: runtime, caller: caller) }
            return
        }
        do {
            let request = try await SubscriptionRequest.parse(
                query: payload.query, variables: payload.variables ?? [:], operationName: payload.operationName, caller: caller, on: runtime,
                limits: services.executor.limits)
            let subscriber = LiveSubscription(subscription: subscription, request: request, runtime: runtime, caller: caller, lastSeq: 0)
            enqueueStart(subscriber)
        } catch {
            await fail(subscription, error)
        }
    }

    /// Whether the payload's operation is a subscription. A document that does not parse, or names no operation it
    /// has, is not: the executor answers it with the same errors as over HTTP.
    private func isSubscription(_ payload: GraphQLWSSubscribePayload, on runtime: DataRuntime) -> Bool {
        guard payload.query.utf8.count <= services.executor.limits.maximumDocumentBytes else { return false }
        let document =
            runtime.documents.value(payload.query)?.document
            ?? (try? parse(source: Source(body: payload.query, name: "GraphQL request")))
        guard let document, let operation = GraphQLLimits.operation(in: document, named: payload.operationName) else { return false }
        return operation.operation == .subscription
    }

    /// Runs a query or mutation as the HTTP endpoint does and answers it: `next` with the result and `complete`, or
    /// `error` alone for a request error (a document that does not parse, breaks a limit or fails validation, and so
    /// never ran), as the protocol says.
    private func answer(_ subscription: Subscription, _ payload: GraphQLWSSubscribePayload, runtime: DataRuntime, caller: DataCaller) async {
        let result: JSONValue
        do {
            result = try await services.executor.result(
                query: payload.query, variables: payload.variables ?? [:], operationName: payload.operationName, on: runtime, caller: caller,
                logger: logger, reference: "operation \(subscription.id) of connection \(id)")
        } catch {
            await fail(subscription, error)
            return
        }
        let body = result.objectValue ?? [:]
        if body["data"] == nil, let errors = body["errors"]?.arrayValue {
            perform(state.withLock { $0.machine.subscriptionFailed(subscription, errors: errors.compactMap(\.objectValue)) })
            return
        }
        perform(state.withLock { $0.machine.next(subscription, payload: body) })
        perform(state.withLock { $0.machine.subscriptionFinished(subscription) })
    }

    /// Ends an operation with an `error` message: a subscription's refusal with its codes, a Kizuna error with its
    /// own, anything else as an internal error (logged here; the message says nothing of it).
    func fail(_ subscription: Subscription, _ error: any Error) async {
        let errors: [[String: JSONValue]]
        switch error {
        case let refusal as SubscriptionRefusal:
            errors = ((try? refusal.json()) ?? []).compactMap(\.objectValue)
        case let kizuna as KizunaError:
            errors = [["message": .string(kizuna.message), "extensions": ["code": .string(kizuna.code.rawValue)]]]
        default:
            logger.error(
                "A graphql-transport-ws operation failed",
                metadata: ["connection": "\(id)", "operation": "\(subscription.id)", "error": "\(String(reflecting: error))"])
            errors = []  // the machine sends one internal error, with no internals
        }
        perform(state.withLock { $0.machine.subscriptionFailed(subscription, errors: errors) })
    }
}
