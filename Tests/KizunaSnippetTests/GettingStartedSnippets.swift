import Foundation
import KizunaClient

// The ```swift blocks of KizunaClient.docc/GettingStarted.md, copied verbatim (SnippetSyncTests keeps them so) so
// that they compile with the SDK as it is. The functions are never called: their parameters stand for what the
// article's earlier blocks made and for the app's own code; a line after a snippet uses what it made.

// snippet: Sources/KizunaClient/KizunaClient.docc/GettingStarted.md#1
private func gettingStartedConnect() throws {
    let support = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask)[0]
    let app = try KizunaApp(
        server: URL(string: "https://api.example.com")!,
        appId: "shop",
        directory: support.appending(path: "Kizuna"),
        device: try .current(attributes: ["plan": .string("pro")])
    )
    // snippet end
    _ = app
}

// snippet: Sources/KizunaClient/KizunaClient.docc/GettingStarted.md#2
private func gettingStartedRemoteConfig(app: KizunaApp) async throws {
    let config = RemoteConfig(app: app, defaults: ["newCheckout": false, "banner": "Welcome"])
    do {
        try await config.fetchAndActivate(minimumInterval: .seconds(600))
    } catch let error where error.code == .throttled {
        // error.retryAfter says how many seconds to wait
    }
    let banner = config.string(forKey: "banner")
    // snippet end
    _ = banner
}

// snippet: Sources/KizunaClient/KizunaClient.docc/GettingStarted.md#3
private func gettingStartedDecode(config: RemoteConfig) throws {
    struct LimitsDTO: Decodable { var cart: String }  // the wire: {"cart": "20"}
    struct Limits { var cart: Int }
    let limits = try config.decode(LimitsDTO.self, forKey: "limits") { dto in
        guard let cart = Int(dto.cart) else { throw KizunaError(.validationFailed, "cart is not a number") }
        return Limits(cart: cart)
    }
    // snippet end
    _ = limits
}

// snippet: Sources/KizunaClient/KizunaClient.docc/GettingStarted.md#4
private func gettingStartedUpdateGate(
    app: KizunaApp, showBlockingAlert: (UpdateDecision) -> Void, present: (UpdateDecision) -> Void
) async throws {
    let gate = UpdateGate(app: app)
    if let decision = gate.current, decision.isBlocking { showBlockingAlert(decision) }  // at launch, before any network

    let check = try await gate.check()  // at launch and whenever the app becomes active
    if check.shouldPresent { present(check.decision) }
}

// snippet: Sources/KizunaClient/KizunaClient.docc/GettingStarted.md#5
private func gettingStartedData(app: KizunaApp, room: String, text: String, show: ([(String, Bool)]) -> Void) async throws {
    struct Message: Codable, Sendable {
        var id: String
        var roomId: String
        var text: String
        var createdAt: String
    }

    try await app.data.outbox.send(.create("Message", ["roomId": .string(room), "text": .string(text)], parent: "Room:\(room)"))

    let query = LiveQuery<Message>("Message", matching: ["roomId": .string(room)], sortedBy: \.createdAt)
    for try await messages in app.data.observe(query) {
        show(messages.map { ($0.value.text, $0.isPending) })  // ($0.hasFailed: $0.outboxItem says why; retry or discard it)
    }
}
