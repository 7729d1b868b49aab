import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import KizunaTestSupport
import Testing

@testable import KizunaServer

/// An app's Push pages over HTTP, against the local APNs: the credentials' status without the key, a localized
/// notification composed and sent, the composer's refusals at their fields, and the report with its reasons.
@Suite("Admin console: push")
struct ConsolePushTests {
    @Test(arguments: TestBackend.available)
    func aNotificationIsComposedSentAndReported(_ backend: TestBackend) async throws {
        let push = try await PushFixture.start()
        try await withTestServer(backend, configure: push.configure) { server in
            #expect(try await server.send(.post, "/v1/admin/apps", json: UpdateGateTests.app).status == .created)
            var browser = ConsoleClient(server)
            try await browser.signIn()
            let path = "/console/apps/shop/push"
            #expect(try await browser.get(path).text.contains("No APNs credentials"))
            let set = try await server.send(.put, "/v1/admin/apps/shop/push/credentials", json: push.credentials)
            #expect(set.status == .ok)
            try await PushFixture.register(server, 1, extra: #","locale":"ja-JP""#)
            try await PushFixture.register(server, 2, extra: #","locale":"en-GB""#)
            push.apns.script(PushFixture.token(2), [.reject(status: 400, reason: "BadDeviceToken")])

            // The status shows the key's fingerprint, never the key.
            let page = try await browser.get(path)
            let info = try await server.send(.get, "/v1/admin/apps/shop/push/credentials").decode(PushCredentialsInfo.self)
            #expect(page.text.contains(#"<td class="mono">\#(PushFixture.keyId)</td>"#) && page.text.contains(info.keyFingerprint))
            #expect(!page.text.contains("PRIVATE KEY") && !page.text.contains(String(push.key.pemRepresentation.split(separator: "\n")[1])))
            let csrf = try #require(ConsoleClient.csrf(in: page.text))

            // Refused at their fields: no target, a badge that is not a number, a bad translation line.
            let refused = try await browser.post(
                path, ["csrf": csrf, "title": "Sale", "body": "Today", "badge": "lots", "targetKind": "user", "target": "", "translations": "ja"])
            #expect(refused.status == .badRequest)
            for field in ["target", "badge", "translations"] { #expect(refused.text.contains(#"id="\#(field)-errors""#), "\(field)") }
            #expect(refused.text.contains(#"value="Sale""#))
            // Refused by the admin API: a condition it cannot read, shown at the target.
            let badCondition = try await browser.post(
                path, ["csrf": csrf, "body": "Today", "targetKind": "condition", "target": #"{"nonsense":{"is":1}}"#])
            #expect(badCondition.status == .badRequest && badCondition.text.contains(#"id="target-errors""#), "\(badCondition.text)")

            // Sent to every device, in each one's language.
            let sent = try await browser.post(
                path,
                [
                    "csrf": csrf, "title": "Sale", "body": "Today only", "translations": "ja = セール | 本日限り", "badge": "1", "targetKind": "all",
                    "target": "",
                ])
            #expect(sent.status == .seeOther)
            let location = try #require(sent.headers[.location])
            let id = try #require(location.split(separator: "/").last?.split(separator: "?").first.map(String.init))
            #expect(location == "\(path)/jobs/\(id)?notice=pushScheduled")
            let done = try await push.finish(id, on: server, senders: [try #require(server.pushSender)])
            #expect(done.totals == .init(devices: 2, pending: 0, sent: 1, failed: 1, skipped: 0))
            let japanese = try #require(push.apns.received.first { $0.token == PushFixture.token(1) })
            #expect(String(decoding: japanese.payload, as: UTF8.self).contains("セール"))

            // The report: totals, the failure's reason, each device.
            let report = try await browser.get(location)
            #expect(report.text.contains("Scheduled: it is sent when due."))
            #expect(report.text.contains(#"<tr><th scope="row">Sent</th><td>1</td></tr>"#))
            #expect(report.text.contains(#"<table id="reasons">"#) && report.text.contains(#"<td class="mono">BadDeviceToken</td><td>1</td>"#))
            #expect(report.text.contains(#"<td class="mono">i1</td><td>sent</td>"#))
            #expect(report.text.contains(#"<span lang="ja">ja: セール</span>"#))
            #expect(try await browser.get(path).text.contains("1 / 2"), "the latest jobs list it")

            // A job scheduled for later is cancelled from its report.
            let later = try await browser.post(
                path, ["csrf": csrf, "body": "Tomorrow", "targetKind": "install", "target": "i1", "sendAt": "2099-01-01T09:00"])
            let laterLocation = try #require(later.headers[.location])
            let laterId = try #require(laterLocation.split(separator: "/").last?.split(separator: "?").first.map(String.init))
            #expect(try await PushFixture.status(server, laterId).state == .scheduled)
            let cancelled = try await browser.post("\(path)/jobs/\(laterId)/cancel", ["csrf": csrf])
            #expect(cancelled.status == .seeOther && cancelled.headers[.location] == "\(path)/jobs/\(laterId)?notice=pushCancelled")
            #expect(try await PushFixture.status(server, laterId).state == .cancelled)
        }
        await push.apns.stop()
    }
}
