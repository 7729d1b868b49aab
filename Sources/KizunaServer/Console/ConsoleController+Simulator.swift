import Foundation
import HTTPTypes
import Hummingbird
import KizunaCore

/// The device simulators: the remote config's through `POST /v1/admin/apps/{app}/config:simulate` (the values and what
/// decided each), the update gate's through the device route `POST /v1/apps/{app}/gate:check` itself (the decision a
/// device would get now). GET forms, since a simulation changes nothing (and a result can be bookmarked or shared).
extension ConsoleController {
    func addSimulatorRoutes(to root: RouterGroup<KizunaRequestContext>) {
        for kind in [DocumentKind.config, .gate] {
            root.get(RouterPath("/console/apps/{app}/\(kind.rawValue)/simulate"), use: signedIn { try await simulator($0, $1, $2, kind) })
        }
    }

    func simulator(_ request: Request, _ context: KizunaRequestContext, _ session: ConsoleSession, _ kind: DocumentKind) async throws -> Response {
        guard let app = try await findApp(try context.parameters.require("app"), session, context) else { return notFound(request, session) }
        let frame = Self.frame(request, session, section: .apps)
        let query = request.uri.queryParameters
        func given(_ name: String) -> String { query[Substring(name)].map(String.init) ?? "" }
        let device = ConsoleSimulatorPages.Device(
            appVersion: given("appVersion"), buildNumber: given("buildNumber"), platform: given("platform"), osVersion: given("osVersion"),
            locale: given("locale"), country: given("country"), installId: given("installId"), attributes: given("attributes"), at: given("at"))
        guard query["appVersion"] != nil else {
            return Self.html(ConsoleSimulatorPages.page(frame, kind: kind, app: app, device: device, result: nil))
        }
        let attributes: [String: JSONValue]
        do {
            attributes = try Self.attributes(device.attributes)
        } catch {
            let problems = [ConsolePages.Problem(field: "attributes", message: "\(frame.text[.badAttribute]): \(error.line)")]
            return Self.html(
                ConsoleSimulatorPages.page(frame, kind: kind, app: app, device: device, result: nil, problems: problems), status: .badRequest)
        }
        var body: [String: JSONValue] = ["appVersion": .string(device.appVersion)]
        for (key, value) in [
            ("buildNumber", device.buildNumber), ("platform", device.platform), ("osVersion", device.osVersion), ("locale", device.locale),
            ("country", device.country), ("installId", device.installId),
        ] where !value.trimmingCharacters(in: .whitespaces).isEmpty {
            body[key] = .string(value.trimmingCharacters(in: .whitespaces))
        }
        if !attributes.isEmpty { body["attributes"] = .object(attributes) }
        let at = device.at.trimmingCharacters(in: .whitespaces)
        let path =
            kind == .gate
            ? "/v1/apps/\(Self.escapedSegment(app.id))/gate:check"
            : "\(Self.appPath(app.id))/config:simulate" + (at.isEmpty ? "" : "?at=\(Self.escapedSegment(at))")
        let answer = try await api.call(.post, path, json: JSONValue.object(body), as: session.token, context: context)
        if let error = answer.error {
            let problems = ConsolePages.problems(error) { field in Self.simulatorLabel(field, frame.text) }
            let page = ConsoleSimulatorPages.page(frame, kind: kind, app: app, device: device, result: nil, problems: problems)
            return Self.html(page, status: answer.status)
        }
        let result =
            kind == .gate
            ? ConsoleSimulatorPages.decision(frame.text, try answer.json())
            : ConsoleSimulatorPages.results(frame.text, try answer.decode(ConfigSimulation.self))
        return Self.html(ConsoleSimulatorPages.page(frame, kind: kind, app: app, device: device, result: result))
    }

    /// A line of the attributes field that is not `name=value`.
    struct AttributeLineError: Error {
        let line: String
    }

    /// The attributes field's `name=value` lines as the JSON the app would send: `true`/`false` booleans, numbers
    /// numbers, anything else a string. Blank lines are skipped.
    static func attributes(_ text: String) throws(AttributeLineError) -> [String: JSONValue] {
        var attributes: [String: JSONValue] = [:]
        for line in text.split(whereSeparator: \.isNewline).map({ $0.trimmingCharacters(in: .whitespaces) }) where !line.isEmpty {
            guard let equals = line.firstIndex(of: "="), equals != line.startIndex else { throw AttributeLineError(line: line) }
            let name = line[..<equals].trimmingCharacters(in: .whitespaces)
            let value = line[line.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            attributes[name] =
                switch value {
                case "true": .bool(true)
                case "false": .bool(false)
                default: Double(value).map { $0.isFinite ? JSONValue.number($0) : .string(value) } ?? .string(value)
                }
        }
        return attributes
    }

    /// The label of a simulator field the admin API names (`$.appVersion`, `at`).
    private static func simulatorLabel(_ field: String, _ text: ConsoleText) -> String? {
        switch field {
        case "appVersion": text[.appVersionLabel]
        case "buildNumber": text[.buildNumberLabel]
        case "osVersion": text[.osVersionLabel]
        case "platform": text[.platform]
        case "locale": text[.localeLabel]
        case "country": text[.countryLabel]
        case "installId": text[.installIdLabel]
        case "at": text[.atLabel]
        default: field.hasPrefix("attributes") ? text[.attributesLabel] : nil
        }
    }
}
