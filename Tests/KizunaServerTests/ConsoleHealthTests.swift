import Foundation
import HTTPTypes
import HummingbirdTesting
import KizunaCore
import Testing

@testable import KizunaServer

/// The console's Health page: readiness and the numbers of `/metrics` once ready; a migration's progress, without a
/// session, while the store is not (when every other console page is the readiness gate's 503).
@Suite("Admin console: health")
struct ConsoleHealthTests {
    @Test func theReadyPageShowsReadinessRequestsLatencyAndThePool() async throws {
        try await withTestServer { server in
            #expect(try await ConsoleClient(server).get("/console/health").headers[.location] == "/console/sign-in")
            var browser = ConsoleClient(server)
            try await browser.signIn()
            #expect(try await server.send(.get, "/v1/admin/apps").status == .ok)
            let page = try await browser.get("/console/health")
            #expect(page.status == .ok && page.text.contains(#"<a href="/console/health" aria-current="page">Health</a>"#))
            #expect(page.text.contains(#"<tr><th scope="row">This instance</th><td>Ready: migrated, and the store answers</td></tr>"#))
            #expect(page.text.contains(#"<tr><th scope="row">Migrations</th><td>Every migration is applied</td></tr>"#))
            // Numbers from the process's /metrics: requests were answered, so there is a latency and a busiest route.
            #expect(page.text.contains(#"<tr><th scope="row">Latency</th><td>mean "#) && page.text.contains("p95 ≤ "))
            #expect(page.text.contains(#"<td class="mono">GET "#))
            #expect(page.text.contains(#"<th scope="row">Store connections in use</th>"#))
            #expect(!page.text.contains(server.adminToken), "never the token")
        }
    }

    @Test func whileMigratingOnlyHealthAnswersWithTheProgress() async throws {
        let gated = GatedMigration(units: 4)
        try await withTestServer(configure: { $0.migrations = gated.migrations }, waitUntilReady: false) { server in
            await gated.waitUntilHeld()
            let browser = ConsoleClient(server)
            let page = try await browser.get("/console/health", headers: [.acceptLanguage: "ja"])
            #expect(page.status == .serviceUnavailable && page.text.contains(#"<html lang="ja">"#))
            #expect(page.text.contains(#"<meta http-equiv="refresh" content="5">"#))
            #expect(page.text.contains("<code>\(CoreMigrations.all.count + 1) gated</code>"))
            #expect(page.text.contains(#"<progress max="4" value="1""#) && page.text.contains("1 / 4"))
            #expect(try await browser.get("/console/console.css").status == .ok, "styled while migrating")
            #expect(try await browser.get("/console/apps").status == .serviceUnavailable)

            gated.open()
            #expect(await server.readiness.settled() == .ready)
            #expect(try await browser.get("/console/health").headers[.location] == "/console/sign-in")
        }
    }

    @Test func anExpositionIsSummarisedByClassRouteAndBucket() {
        let text = #"""
            # TYPE hb_requests counter
            hb_requests{http_route="/a",http_request_method="GET",http_response_status_code="200"} 90
            hb_requests{http_route="/a",http_request_method="GET",http_response_status_code="500"} 2
            hb_requests{http_route="/b \"x\"",http_request_method="POST",http_response_status_code="404"} 8
            http_server_request_duration_bucket{http_route="/a",http_request_method="GET",http_response_status_code="200",le="0.005"} 50
            http_server_request_duration_bucket{http_route="/a",http_request_method="GET",http_response_status_code="200",le="0.025"} 90
            http_server_request_duration_bucket{http_route="/a",http_request_method="GET",http_response_status_code="200",le="+Inf"} 90
            http_server_request_duration_sum{http_route="/a",http_request_method="GET",http_response_status_code="200"} 0.9
            http_server_request_duration_count{http_route="/a",http_request_method="GET",http_response_status_code="200"} 90
            http_server_request_duration_bucket{http_route="/b \"x\"",http_request_method="POST",http_response_status_code="404",le="0.005"} 0
            http_server_request_duration_bucket{http_route="/b \"x\"",http_request_method="POST",http_response_status_code="404",le="0.025"} 0
            http_server_request_duration_bucket{http_route="/b \"x\"",http_request_method="POST",http_response_status_code="404",le="+Inf"} 10
            http_server_request_duration_sum{http_route="/b \"x\"",http_request_method="POST",http_response_status_code="404"} 120
            http_server_request_duration_count{http_route="/b \"x\"",http_request_method="POST",http_response_status_code="404"} 10
            kizuna_db_connections_in_use 3.0
            kizuna_db_connection_wait_seconds_bucket{le="0.005"} 4
            kizuna_db_connection_wait_seconds_bucket{le="+Inf"} 4
            kizuna_db_connection_wait_seconds_sum 0.004
            kizuna_db_connection_wait_seconds_count 4
            not a sample
            """#
        let summary = MetricsSummary(exposition: text)
        #expect(summary.requestsByClass == ["2xx": 90, "5xx": 2, "4xx": 8] && summary.requests == 100)
        #expect(summary.routes.map(\.route) == ["/a", #"/b "x""#] && summary.routes.first?.serverErrors == 2)
        #expect(
            summary.latency.count == 100 && summary.latency.bound(at: 0.5) == 0.005 && summary.latency.bound(at: 0.9) == 0.025
                && summary.latency.bound(at: 0.95) == .infinity)
        #expect(summary.routes.first?.latency.bound(at: 0.5) == 0.005 && summary.routes.first?.latency.mean == 0.01)
        #expect(summary.connectionsInUse == 3 && summary.connectionWait.mean == 0.001)
    }
}
