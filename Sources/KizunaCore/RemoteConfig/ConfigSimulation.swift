import Foundation

/// What a config template gives one device, and why: each parameter's value with the condition that decided it, and
/// whether each condition holds. The answer of `POST /v1/admin/apps/{app}/config:simulate`, which the console's device
/// simulator shows; the values are exactly what `config:fetch` would answer that device (``RemoteConfigTemplate/simulate(_:version:)``).
public struct ConfigSimulation: Sendable, Hashable, Codable {
    /// A parameter's value for the device.
    public struct Value: Sendable, Hashable, Codable {
        public var value: JSONValue
        /// The condition whose value it is: the first, in the template's order, that holds and has a value for the
        /// parameter. `nil`: none does, and the value is the default.
        public var condition: String?

        public init(value: JSONValue, condition: String?) {
            self.value = value
            self.condition = condition
        }
    }

    /// A condition and whether it holds for the device.
    public struct ConditionResult: Sendable, Hashable, Codable {
        public var name: String
        public var holds: Bool

        public init(name: String, holds: Bool) {
            self.name = name
            self.holds = holds
        }
    }

    /// The template version simulated.
    public var version: Int64
    /// Every parameter's value, by name.
    public var values: [String: Value]
    /// Every condition, in the template's order.
    public var conditions: [ConditionResult]

    public init(version: Int64, values: [String: Value], conditions: [ConditionResult]) {
        self.version = version
        self.values = values
        self.conditions = conditions
    }
}

extension RemoteConfigTemplate {
    /// Every parameter's value for `context` with the condition that decided it, and every condition's outcome (each
    /// evaluated, referenced by a parameter or not). The values are ``evaluate(_:)``'s.
    public func simulate(_ context: EvaluationContext, version: Int64) -> ConfigSimulation {
        let holds = conditions.map { $0.condition.evaluate(context) }
        let values = parameters.mapValues { parameter in
            guard let decided = parameter.conditionalValues.first(where: { holds[$0.index] }) else {
                return ConfigSimulation.Value(value: parameter.defaultValue, condition: nil)
            }
            return ConfigSimulation.Value(value: decided.value, condition: conditions[decided.index].name)
        }
        let results = zip(conditions, holds).map { ConfigSimulation.ConditionResult(name: $0.name, holds: $1) }
        return ConfigSimulation(version: version, values: values, conditions: results)
    }
}
