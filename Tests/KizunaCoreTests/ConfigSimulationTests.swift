import Foundation
import KizunaCore
import Testing

/// The device simulator's answer: the same values `config:fetch` gives, each with the condition that decided it, and
/// every condition's outcome.
@Suite("Config simulation")
struct ConfigSimulationTests {
    @Test func valuesAreTheFetchedOnesWithTheConditionThatDecidedThem() throws {
        let template = try RemoteConfigTemplate(parsing: ConditionTests.json(RemoteConfigTemplateTests.template))
        let devices = [
            try ConditionTests.context(appVersion: "3.9", country: "JP", installId: "a"),
            try ConditionTests.context(appVersion: "3.10.0", country: "JP", installId: "tester"),
            try ConditionTests.context(appVersion: "2.0", country: "FR", installId: "b"),
        ]
        for device in devices {
            let simulated = template.simulate(device, version: 7)
            #expect(simulated.version == 7)
            #expect(simulated.values.mapValues(\.value) == template.evaluate(device))
        }
        let tester = template.simulate(devices[1], version: 7)
        // "testers" comes first in the template, so it decides welcome though "japan" holds too.
        #expect(tester.values["welcome"] == .init(value: .string("Hi tester"), condition: "testers"))
        #expect(tester.values["maxItems"] == .init(value: .number(50), condition: "new"))
        #expect(tester.values["theme"]?.condition == nil)
        #expect(tester.conditions == [.init(name: "testers", holds: true), .init(name: "japan", holds: true), .init(name: "new", holds: true)])
        let french = template.simulate(devices[2], version: 7)
        #expect(french.values.values.allSatisfy { $0.condition == nil }, "every value the default")
        #expect(french.conditions.map(\.holds) == [false, false, false])
    }
}
