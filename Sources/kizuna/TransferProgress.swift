import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Shows how far an artifact upload or download has got, on standard error unless told otherwise.
///
/// On a terminal it redraws one line in place, at most every ``redrawInterval``:
/// `App.ipa  [#########-----------]   45%  460.2 MB / 1.0 GB  82.4 MB/s  0:07 left`, fitted to the window's width.
/// Elsewhere (CI logs, pipes) it writes plain lines, never a carriage return: one at the start, one each time another
/// 10 % is crossed, and one at the end. Standard output is never written, so a command's `--json` output stays clean
/// with no special case.
///
/// Create it as the transfer begins (it shows the start at once), call ``advance(to:)`` as bytes go, then ``finish()``
/// or ``fail()``; calls after either are ignored. ``track(isolation:_:)`` does the last step for you. Any task may call it.
final class TransferProgress: Sendable {
    /// Which way the bytes go; the plain lines start with it.
    enum Verb: String, Sendable {
        case upload, download
    }

    /// On a terminal, redraws closer together than this are skipped: more is flicker, and a write per chunk costs.
    static let redrawInterval: Duration = .milliseconds(100)

    private struct State {
        var done: Int64 = 0
        var lastDraw: Duration = .zero
        /// Plain lines: the tens of percent last reported.
        var reportedTens = 0
        var ended = false
    }

    private let label: String
    private let total: Int64
    private let verb: Verb
    private let isTerminal: Bool
    private let columns: @Sendable () -> Int
    private let elapsed: @Sendable () -> Duration
    private let output: @Sendable (String) -> Void
    private let state = Mutex(State())

    /// Starts showing a transfer of `total` bytes.
    /// - Parameters:
    ///   - label: what is moving, usually the file's name; control characters are shown as `?`.
    ///   - total: the size in bytes; 0 is allowed and shows 100 % at the end.
    ///   - verb: the direction, which begins each plain line.
    ///   - isTerminal: whether to redraw one line in place; by default, whether standard error is a terminal that can.
    ///   - columns: the terminal's width, asked at each redraw so a resized window is followed; by default standard error's.
    ///   - elapsed: the time since the transfer began; by default a clock started now. Tests pass a fake one.
    ///   - output: where the text goes, in pieces that each end a line or redraw one; by default standard error.
    ///     Called under the progress's lock, so it must not call back into the progress.
    init(
        label: String, total: Int64, verb: Verb,
        isTerminal: Bool = TransferProgress.standardErrorIsTerminal(),
        columns: @escaping @Sendable () -> Int = TransferProgress.standardErrorColumns,
        elapsed: @escaping @Sendable () -> Duration = TransferProgress.stopwatch(),
        output: @escaping @Sendable (String) -> Void = TransferProgress.writeToStandardError
    ) {
        self.label = String(label.map { $0.unicodeScalars.contains { $0.properties.generalCategory == .control } ? "?" : $0 })
        self.total = max(total, 0)
        self.verb = verb
        self.isTerminal = isTerminal
        self.columns = columns
        self.elapsed = elapsed
        self.output = output
        state.withLock { state in
            state.lastDraw = elapsed()
            if isTerminal {
                output(terminalLine(done: 0, at: state.lastDraw, finished: false))
            } else {
                output("\(verb.rawValue): \(self.label) \(Self.bytes(self.total))\n")
            }
        }
    }

    /// Records that `done` bytes have moved so far. A smaller count than the last is ignored: a retried chunk does
    /// not move the bar back.
    func advance(to done: Int64) {
        state.withLock { state in
            guard !state.ended, done > state.done else { return }
            state.done = done
            if isTerminal {
                let now = elapsed()
                guard now - state.lastDraw >= Self.redrawInterval else { return }
                state.lastDraw = now
                output(terminalLine(done: done, at: now, finished: false))
            } else {
                let tens = Self.percent(done, of: total) / 10
                // 100 % is the finish line's to say.
                guard tens > state.reportedTens, tens < 10 else { return }
                state.reportedTens = tens
                output("\(verb.rawValue): \(label) \(Self.percent(done, of: total))% (\(Self.bytes(done)) of \(Self.bytes(total)))\n")
            }
        }
    }

    /// Shows the transfer complete: all of `total` (or more, if more was reported), the average rate and the time taken.
    func finish() {
        state.withLock { state in
            guard !state.ended else { return }
            state.ended = true
            state.done = max(state.done, total)
            let now = elapsed()
            if isTerminal {
                output(terminalLine(done: state.done, at: now, finished: true) + "\n")
            } else {
                let rate = Self.rate(state.done, over: now).map { " (\($0))" } ?? ""
                output("\(verb.rawValue): \(label) done: \(Self.bytes(state.done)) in \(Self.clock(now))\(rate)\n")
            }
        }
    }

    /// Ends the display where the transfer stopped, so the error the caller prints next starts on a line of its own.
    func fail() {
        state.withLock { state in
            guard !state.ended else { return }
            state.ended = true
            if isTerminal {
                output(terminalLine(done: state.done, at: elapsed(), finished: false) + "\n")
            } else {
                let at = "\(Self.percent(state.done, of: total))% (\(Self.bytes(state.done)) of \(Self.bytes(total)))"
                output("\(verb.rawValue): \(label) failed at \(at)\n")
            }
        }
    }

    /// Runs `body` with this progress, then ends it: ``finish()`` when `body` returns, ``fail()`` when it throws.
    func track<R>(isolation: isolated (any Actor)? = #isolation, _ body: (TransferProgress) async throws -> R) async throws -> R {
        do {
            let result = try await body(self)
            finish()
            return result
        } catch {
            fail()
            throw error
        }
    }

    /// The terminal redraw: back to the start of the line, the line, and the rest of any longer line before it cleared.
    private func terminalLine(done: Int64, at now: Duration, finished: Bool) -> String {
        let rate = Self.rate(done, over: now) ?? ""
        let time = finished ? "in \(Self.clock(now))" : Self.timeLeft(done, of: total, over: now).map { "\(Self.clock($0)) left" } ?? ""
        // In a narrow window the rate goes first, then the sizes, then the time: how far and how long matter most.
        let figures = [
            Figure(text: Self.percentFigure(done, of: total, finished: finished), reserve: 4, priority: 3),
            // Room for the widest count ("999.9 MB / ") before the total, at the finish too, so the bar never jumps.
            Figure(
                text: finished ? Self.bytes(done) : "\(Self.bytes(done)) / \(Self.bytes(total))", reserve: 11 + Self.bytes(total).count,
                priority: 1),
            Figure(text: rate, reserve: 10, priority: 0),  // "999.9 MB/s"
            Figure(text: time, reserve: 10, priority: 2),  // "59:59 left"
        ]
        let filled = finished ? 1 : (total > 0 ? min(Double(done) / Double(total), 1) : 0)
        let line = Self.layout(label: label, filled: filled, figures: figures, columns: columns())
        return "\r\(line)\u{1B}[K"
    }
}

extension TransferProgress {
    /// Whether standard error is a terminal that understands `\r` and `ESC[K` (not one with TERM=dumb).
    static func standardErrorIsTerminal(_ environment: Environment = .process) -> Bool {
        isatty(STDERR_FILENO) != 0 && environment["TERM"] != "dumb"
    }

    /// Standard error's terminal width in columns; 80 when it is not a terminal or will not say.
    @Sendable static func standardErrorColumns() -> Int {
        var size = winsize()
        guard ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }

    /// A clock that reads the time since this call.
    static func stopwatch() -> @Sendable () -> Duration {
        let start = ContinuousClock.now
        return { .now - start }
    }

    /// The default output: standard error, so standard output (and `--json`) never carries progress.
    @Sendable static func writeToStandardError(_ text: String) {
        FileHandle.standardError.write(Data(text.utf8))
    }
}
