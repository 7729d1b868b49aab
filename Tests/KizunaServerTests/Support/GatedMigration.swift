@testable import KizunaServer

/// A data migration step, after the core ones, whose second batch waits for the test: a server caught mid-migration
/// without timing. The step has `units` units; its first batch does one, its second the rest.
struct GatedMigration: Sendable {
    let step: MigrationStep
    private let reached: AsyncStream<Void>
    private let opener: AsyncStream<Void>.Continuation

    init(units: Int = 2) {
        let (gate, opener) = AsyncStream.makeStream(of: Void.self)
        let (reached, reachedSignal) = AsyncStream.makeStream(of: Void.self)
        (self.reached, self.opener) = (reached, opener)
        step = MigrationStep(
            version: CoreMigrations.all.count + 1, name: "gated",
            work: .batched(
                BatchedWork(
                    prepare: { _ in }, count: { _ in units },
                    batch: { _, checkpoint, _ in
                        switch checkpoint {
                        case nil: return BatchOutcome(checkpoint: "1", visited: 1)
                        case "1":
                            reachedSignal.yield()
                            for await _ in gate { break }
                            return BatchOutcome(checkpoint: "2", visited: units - 1)
                        default: return nil
                        }
                    }, finish: { _ in })))
    }

    /// The migrations to configure: the core ones, then this step.
    var migrations: [MigrationStep] { CoreMigrations.all + [step] }

    /// Returns once the step waits in its second batch (one unit done).
    func waitUntilHeld() async {
        for await _ in reached { break }
    }

    /// Lets the step finish.
    func open() {
        opener.yield()
    }
}
