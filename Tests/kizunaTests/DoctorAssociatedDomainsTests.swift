import ArgumentParser
import Foundation
import KizunaCore
import Testing

@testable import kizuna

/// `kizuna doctor associated-domains` against nginx serving the file the ways sites get it wrong: each answer judged
/// as iOS judges it.
@Suite("kizuna doctor associated-domains")
struct DoctorAssociatedDomainsTests {
    static let appID = "ABCDE12345.com.example.shop"
    static let file =
        #"{"applinks":{"details":[{"appIDs":["\#(appID)"],"components":[{"/":"/products/*"}]}]},"webcredentials":{"apps":["\#(appID)"]}}"#
    static let json = "location = /.well-known/apple-app-site-association { default_type application/json; }"

    /// A case: the file nginx holds (if any), its locations, and what the doctor must say.
    struct Case: Sendable, CustomTestStringConvertible {
        var name: String
        var file: String?
        var locations: String
        var outcome: AssociationDiagnosis.Outcome
        var checks: [String: ReleaseCheck.Status]
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(
            name: "a good file", file: file, locations: json, outcome: .associated,
            checks: ["answer": .passed, "content-type": .passed, "size": .passed, "json": .passed, "webcredentials": .passed, "applinks": .passed]),
        Case(
            name: "a redirect", file: file,
            locations: "location = /.well-known/apple-app-site-association { return 301 https://www.example.com$request_uri; }",
            outcome: .denied, checks: ["answer": .error]),
        Case(name: "a 404", file: nil, locations: "", outcome: .denied, checks: ["answer": .error]),
        Case(
            name: "a 503", file: file, locations: "location = /.well-known/apple-app-site-association { return 503; }", outcome: .retried,
            checks: ["answer": .error]),
        Case(
            name: "an oversized file", file: #"{"webcredentials":{"apps":["\#(appID)"]},"pad":"\#(String(repeating: "x", count: 140_000))"}"#,
            locations: json, outcome: .denied, checks: ["answer": .passed, "size": .error]),
        Case(
            name: "a legacy-only file", file: #"{"applinks":{"apps":[],"details":[{"appID":"\#(appID)","paths":["/products/*"]}]}}"#,
            locations: json, outcome: .associated, checks: ["json": .passed, "applinks.legacy": .warning, "applinks": .passed]),
        Case(name: "the wrong content type", file: file, locations: "", outcome: .associated, checks: ["content-type": .error, "json": .passed]),
    ]

    @Test(.enabled(if: Nginx.shouldRun, "nginx is not installed (apt-get install nginx); .ci/run installs it"), arguments: cases)
    func eachAnswerIsJudgedAsIOSJudgesIt(_ sample: Case) async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kizuna-aasa-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root.appendingPathComponent(".well-known"), withIntermediateDirectories: true)
        if let file = sample.file {
            try Data(file.utf8).write(to: root.appendingPathComponent(".well-known/apple-app-site-association"))
        }
        let diagnosis = try await Nginx.serve(root, locations: sample.locations) { base in
            let command = try #require(
                try Kizuna.parseAsRoot([
                    "doctor", "associated-domains", base.absoluteString, "--app-id", Self.appID, "--url", "\(base.absoluteString)/products/7",
                ]) as? AssociatedDomainsDoctor)
            return try await command.diagnose(Environment(values: [:]))
        }
        #expect(diagnosis.outcome == sample.outcome, "\(diagnosis.checks)")
        let found = Dictionary(diagnosis.checks.map { ($0.id, $0.status) }, uniquingKeysWith: { first, _ in first })
        for (id, status) in sample.checks { #expect(found[id] == status, "\(id): \(diagnosis.checks.first { $0.id == id }?.message ?? "absent")") }
        #expect(found["https"] == .error, "served over http here, which iOS never fetches")
        if sample.outcome == .associated { #expect(diagnosis.openings.first?.appID == Self.appID) }
    }
}
