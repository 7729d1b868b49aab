import Synchronization

extension KizunaDatabase {
    /// The counter of the statements this task and its child tasks run through a ``KizunaDatabase``, if any: how a
    /// test proves what a request costs (the data API's relations take one statement per level, never one per row).
    ///
    /// Counted in ``execute(sql:_:)``, which every statement run on the database itself goes through (a SQLKit
    /// builder's `run`, `all` and `first`, both their future and async forms). Statements run on the connection that
    /// ``withSession(_:)`` or ``transaction(_:)`` hands to their closure are not counted: that connection is the
    /// driver's own. Without a counter bound, counting costs one task-local read per statement.
    @TaskLocal package static var statementCounter: StatementCounter?
}

/// Counts statements; bind one with `KizunaDatabase.$statementCounter.withValue(counter) { … }`.
package final class StatementCounter: Sendable {
    private let count = Atomic<Int>(0)

    package init() {}

    /// The statements counted so far.
    package var value: Int { count.load(ordering: .relaxed) }

    /// Counts one statement.
    func increment() {
        _ = count.add(1, ordering: .relaxed)
    }
}
