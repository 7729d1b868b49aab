import Foundation
import KizunaClient

// The ```swift blocks of README.md, copied verbatim (SnippetSyncTests keeps them so) so that they compile with the
// SDK as it is. The functions are never called: their parameters stand for what the app already has, and a
// line after a snippet uses what it made (the app would), so the snippets compile without warnings.

// snippet: README.md#1
private func readmeInTheApp(present: (UpdateDecision) -> Void) async throws {
    let support = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask)[0]
    let app = try KizunaApp(
        server: URL(string: "https://api.example.com")!, appId: "shop",
        directory: support.appending(path: "Kizuna"), device: try .current())

    let config = RemoteConfig(app: app, defaults: ["newCheckout": false, "limits": ["cart": "20"], "saleEndsAt": "2026-01-01T00:00:00Z"])
    _ = try? await config.fetchAndActivate(minimumInterval: .seconds(600))  // throws `throttled` with retryAfter, `timeout`, …
    let showsNewCheckout = config.bool(forKey: "newCheckout") ?? false
    struct LimitsDTO: Decodable { var cart: String }  // the wire shape: {"cart": "20"}
    let cartLimit = try config.decode(LimitsDTO.self, forKey: "limits") { Int($0.cart) ?? 20 }  // decode, then convert
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .iso8601  // `decoder:` takes yours, configured as your API client's (keys, dates)
    let saleEndsAt = try config.decode(Date.self, forKey: "saleEndsAt", decoder: decoder)

    let gate = UpdateGate(app: app)
    if let decision = gate.current, decision.isBlocking { present(decision) }  // block at launch, before the network answers
    let check = try await gate.check()  // at launch and on becoming active: calls at once share one request
    if check.shouldPresent { present(check.decision) }  // require/maintenance: once per foreground; recommend: per nag interval

    for try await _ in config.updates() { try await config.activate() }  // realtime, when you choose
    for try await check in gate.updates() where check.shouldPresent { present(check.decision) }
    // snippet end
    _ = (showsNewCheckout, cartLimit, saleEndsAt)  // what the app goes on to use
}

// snippet: README.md#2
private func readmeGateMirror(app: KizunaApp) async throws {
    let mirrored = UpdateGate(
        app: app,
        mirror: try GateMirrorSettings(
            urls: [URL(string: "https://status.example.com/kizuna/shop/gate.json")!],
            publicKeys: ["oWk2Yq1j3Ldm7u9z4Q0TgH8xS5vN2cE6bR1fA3pK7sM="]))  // from `kizuna gate mirror --public-key`
    let answer = try await mirrored.check()  // answer.source == .mirror when the API was unreachable, failing or slow
    // snippet end
    _ = answer
}

// snippet: README.md#3
private func readmeSecureStore(token: String) throws {
    let store = SecureStore(service: "com.example.shop")
    store["session"] = token
    try store.label("Shop session").set(token, forKey: "session")
    let saved = try store.string(forKey: "session")
    // snippet end
    _ = saved
}

private struct Message: Codable, Sendable {
    var id: String
    var text: String
}

// snippet: README.md#4
private func readmeData(app: KizunaApp) async throws {
    // Message: your Codable struct with the fields the documents select (id, text).
    let sent: Message = try await app.data.mutate(
        "mutation($input: CreateMessageInput!) { createMessage(input: $input) { id text } }",
        variables: ["input": ["roomId": "r1", "text": "hello"]], field: "createMessage")
    let live = "subscription($since: String) { onCreateMessage(since: $since) { id text } }"
    for try await event in app.data.subscribe(live, field: "onCreateMessage", as: Message.self) {
        if case .value(let message, _) = event { print(message.text) }
    }
    // snippet end
    _ = sent
}

// snippet: README.md#5
private func readmeOutbox(app: KizunaApp) async throws {
    try await app.data.outbox.start()  // at launch: sends what an earlier run left
    let item = try await app.data.outbox.send(.create("Message", ["roomId": "r1", "text": "hello"], parent: "Room:r1"))
    for await state in await app.data.outbox.states(of: item.id) {
        if case .failed(let error) = state { print(error.message) }  // outbox.retry(item.id, with: fixed) or discard(item.id)
    }
}

// snippet: README.md#6
private func readmeLiveQuery(app: KizunaApp) async throws {
    let room = LiveQuery<Message>("Message", matching: ["roomId": "r1"], sortedBy: \.id)
    for try await messages in app.data.observe(room) {
        print(messages.map { ($0.isPending ? "… " : "") + $0.value.text })
    }
}

// snippet: README.md#7
private func readmeAccounts(app: KizunaApp, email: String, password: String) async throws {
    let account = try await app.auth.signIn(identifier: email, password: password)
    let web = try await app.auth.handoff(next: "/account")  // load web.url in the WKWebView
    try await app.auth.signOut()
    // snippet end
    _ = (account, web)
}
