import Synchronization
import Testing

@testable import kizuna

/// The progress display of `kizuna release upload` and `download`: a fake clock moved by hand, a captured sink, no sleeps.
@Suite("TransferProgress")
struct TransferProgressTests {
    /// The clock, the window width and everything written, shared with the progress under test.
    final class Harness: Sendable {
        private let now = Mutex<Duration>(.zero)
        private let width: Mutex<Int>
        private let written = Mutex<[String]>([])

        init(columns: Int = 100) { width = Mutex(columns) }

        func progress(_ label: String = "App.ipa", total: Int64, verb: TransferProgress.Verb = .upload, terminal: Bool) -> TransferProgress {
            TransferProgress(
                label: label, total: total, verb: verb, isTerminal: terminal, columns: { self.width.withLock { $0 } },
                elapsed: { self.now.withLock { $0 } }, output: { text in self.written.withLock { $0.append(text) } })
        }

        func wait(_ duration: Duration) { now.withLock { $0 += duration } }
        func resize(_ columns: Int) { width.withLock { $0 = columns } }
        var writes: [String] { written.withLock { $0 } }
    }

    /// A terminal write as the eye sees it: without the carriage return, the erase to the end of line and the newline.
    static func visible(_ write: String) -> String {
        write.replacing("\r", with: "").replacing("\u{1B}[K", with: "").replacing("\n", with: "")
    }

    // MARK: On a terminal

    @Test func aTerminalRedrawsOneLineAtMostEveryTenthOfASecond() {
        let harness = Harness()
        let progress = harness.progress(total: 1_000_000_000, terminal: true)
        #expect(harness.writes.count == 1, "the start is shown at once")
        harness.wait(.milliseconds(50))
        progress.advance(to: 10_000_000)
        #expect(harness.writes.count == 1, "50 ms after the last draw: skipped")
        harness.wait(.milliseconds(50))
        progress.advance(to: 20_000_000)
        #expect(harness.writes.count == 2, "100 ms after: drawn")
        harness.wait(.seconds(1))
        progress.advance(to: 15_000_000)
        progress.advance(to: 20_000_000)
        #expect(harness.writes.count == 2, "no count above the last: nothing to draw, the bar never goes back")
        harness.wait(.milliseconds(1))
        progress.advance(to: 30_000_000)
        #expect(harness.writes.count == 3)
        harness.wait(.milliseconds(1))
        progress.advance(to: 40_000_000)
        #expect(harness.writes.count == 3)
        progress.finish()
        #expect(harness.writes.count == 4, "the finish is drawn however soon it comes")
        for write in harness.writes {
            #expect(write.hasPrefix("\r") && write.contains("\u{1B}[K"))
        }
        #expect(harness.writes.dropLast().allSatisfy { !$0.hasSuffix("\n") })
        #expect(harness.writes.last?.hasSuffix("\u{1B}[K\n") == true)
        progress.advance(to: 50_000_000)
        progress.finish()
        progress.fail()
        #expect(harness.writes.count == 4, "nothing after the end")
    }

    @Test func aTerminalLineShowsBarPercentSizesRateAndTimeLeft() {
        let harness = Harness(columns: 80)
        let progress = harness.progress(total: 1_000_000_000, terminal: true)
        harness.wait(.seconds(10))
        progress.advance(to: 450_000_000)
        #expect(
            Self.visible(harness.writes[1]) == "App.ipa  [########-----------]   45%  450.0 MB / 1.0 GB  45.0 MB/s  0:13 left")
        harness.wait(.seconds(10))
        progress.advance(to: 1_000_000_000)
        harness.wait(.seconds(2))
        progress.finish()
        #expect(Self.visible(harness.writes[3]) == "App.ipa  [###################]  100%  1.0 GB  45.5 MB/s  in 0:22")
    }

    @Test(arguments: [300, 120, 80, 60, 45, 40, 30, 24, 16, 12, 8, 5, 2])
    func aTerminalLineFitsTheWindow(columns: Int) {
        for label in ["KizunaDemo-2024-10-31-build-4711-release-candidate.ipa", "絆デモ-リリース候補-ビルド4711.ipa", "a.ipa"] {
            let harness = Harness(columns: columns)
            let progress = harness.progress(label, total: 2_500_000_000, terminal: true)
            harness.wait(.seconds(3))
            progress.advance(to: 1_234_567_890)
            progress.finish()
            for write in harness.writes {
                let line = Self.visible(write)
                #expect(TransferProgress.displayWidth(line) <= max(columns - 1, 1), "\(columns) columns: \(line)")
            }
        }
    }

    @Test func aNarrowWindowShortensTheLabelThenDropsTheBar() {
        let label = "KizunaDemo-2024-10-31-build-4711-release-candidate.ipa"
        let harness = Harness(columns: 200)
        let progress = harness.progress(label, total: 1_000_000_000, terminal: true)
        #expect(Self.visible(harness.writes[0]).hasPrefix("\(label)  [------------------------------]"), "wide: all of it")
        for (columns, shortened, bar) in [(90, true, true), (30, true, false)] {
            harness.resize(columns)
            harness.wait(.seconds(1))
            progress.advance(to: 100_000_000 * Int64(harness.writes.count))
            let line = Self.visible(harness.writes.last!)
            #expect(line.contains("…") == shortened && line.contains(".ipa  ") && line.contains("[") == bar, "\(columns): \(line)")
            #expect(line.contains("%"), "\(columns): the percentage stays")
        }
        harness.resize(20)
        harness.wait(.seconds(1))
        progress.advance(to: 900_000_000)
        #expect(Self.visible(harness.writes.last!).hasSuffix(" 90%"), "very narrow: the label and the percentage")
    }

    @Test func failEndsTheLineWhereTheTransferStopped() {
        let harness = Harness()
        let progress = harness.progress(total: 1_000_000_000, terminal: true)
        harness.wait(.seconds(1))
        progress.advance(to: 300_000_000)
        progress.advance(to: 370_000_000)  // not drawn yet: too soon after the last
        progress.fail()
        #expect(harness.writes.count == 3)
        #expect(harness.writes[2].hasSuffix("\n") && Self.visible(harness.writes[2]).contains("370.0 MB / 1.0 GB"))
        progress.finish()
        #expect(harness.writes.count == 3)
    }

    @Test func aZeroByteTransferShowsAHundredPercentAtTheEnd() {
        let harness = Harness()
        let terminal = harness.progress("empty.bin", total: 0, terminal: true)
        terminal.advance(to: 0)
        harness.wait(.seconds(1))
        terminal.finish()
        #expect(Self.visible(harness.writes[0]).contains("   0%  0 B / 0 B"))
        #expect(Self.visible(harness.writes[1]) == "empty.bin  [##############################]  100%  0 B  in 0:01")

        let plain = Harness()
        let progress = plain.progress("empty.bin", total: 0, verb: .download, terminal: false)
        progress.advance(to: 0)
        progress.finish()
        #expect(plain.writes == ["download: empty.bin 0 B\n", "download: empty.bin done: 0 B in 0:00\n"])
    }

    // MARK: In a log

    @Test func aLogGetsTheStartEachTenPercentAndTheEnd() {
        let harness = Harness()
        let progress = harness.progress(total: 1_000_000_000, terminal: false)
        for megabyte in 1...1000 {
            harness.wait(.milliseconds(12))
            progress.advance(to: Int64(megabyte) * 1_000_000)
        }
        progress.finish()
        let lines = harness.writes
        #expect(lines.count == 11)
        #expect(lines.first == "upload: App.ipa 1.0 GB\n")
        #expect(lines[3] == "upload: App.ipa 30% (300.0 MB of 1.0 GB)\n")
        #expect(lines.dropFirst().dropLast().map { $0.split(separator: " ")[2] } == (1...9).map { "\($0 * 10)%" })
        #expect(lines.last == "upload: App.ipa done: 1.0 GB in 0:12 (83.3 MB/s)\n")
        #expect(lines.allSatisfy { $0.hasSuffix("\n") && !$0.utf8.contains(UInt8(ascii: "\r")) && !$0.utf8.contains(0x1B) })
    }

    @Test func aJumpOverSeveralTensIsOneLine() {
        let harness = Harness()
        let progress = harness.progress(total: 1_000, verb: .download, terminal: false)
        for done: Int64 in [5, 370, 380, 399, 999, 1_000] { progress.advance(to: done) }
        progress.fail()
        #expect(
            harness.writes == [
                "download: App.ipa 1.0 kB\n", "download: App.ipa 37% (370 B of 1.0 kB)\n", "download: App.ipa 99% (999 B of 1.0 kB)\n",
                "download: App.ipa failed at 100% (1.0 kB of 1.0 kB)\n",
            ])
    }

    @Test func trackFinishesOnReturnAndFailsOnThrow() async throws {
        struct Refused: Error {}
        let harness = Harness()
        let size = try await harness.progress(total: 10, terminal: false).track { progress in
            progress.advance(to: 10)
            return 10
        }
        #expect(size == 10 && harness.writes.last == "upload: App.ipa done: 10 B in 0:00\n")
        await #expect(throws: Refused.self) {
            try await harness.progress(total: 10, terminal: false).track { (_: TransferProgress) -> Void in throw Refused() }
        }
        #expect(harness.writes.last == "upload: App.ipa failed at 0% (0 B of 10 B)\n")
    }

    @Test func controlCharactersInTheLabelCannotBreakTheLine() {
        let harness = Harness()
        _ = harness.progress("evil\r\nname\u{1B}.ipa", total: 1, terminal: false)
        #expect(harness.writes == ["upload: evil?name?.ipa 1 B\n"])
    }

    @Test func aDumbTerminalGetsPlainLines() {
        #expect(!TransferProgress.standardErrorIsTerminal(Environment(values: ["TERM": "dumb"])))
        #expect(TransferProgress.standardErrorColumns() > 0, "80 when standard error will not say")
    }

    // MARK: Words and numbers

    @Test(
        arguments: [
            (0, "0 B"), (-5, "0 B"), (999, "999 B"), (1_000, "1.0 kB"), (1_049, "1.0 kB"), (1_050, "1.1 kB"), (999_949, "999.9 kB"),
            (999_950, "1.0 MB"), (460_200_000, "460.2 MB"), (1_000_000_000, "1.0 GB"), (1_073_741_824, "1.1 GB"),
            (12_345_678_901_234, "12.3 TB"), (Int64.max, "9.2 EB"),
        ] as [(Int64, String)])
    func bytesInDecimalUnitsWithOneDecimal(count: Int64, text: String) {
        #expect(TransferProgress.bytes(count) == text)
    }

    @Test(
        arguments: [
            (.zero, "0:00"), (.seconds(7), "0:07"), (.milliseconds(59_200), "0:59"), (.milliseconds(59_500), "1:00"),
            (.seconds(600), "10:00"), (.seconds(3_600), "1:00:00"), (.seconds(3_725), "1:02:05"),
        ] as [(Duration, String)])
    func clockInMinutesOrHours(duration: Duration, text: String) {
        #expect(TransferProgress.clock(duration) == text)
    }

    @Test func rateAndTimeLeftWaitForData() {
        #expect(TransferProgress.rate(1_000, over: .zero) == nil)
        #expect(TransferProgress.rate(0, over: .seconds(1)) == nil)
        #expect(TransferProgress.rate(82_400_000, over: .seconds(1)) == "82.4 MB/s")
        #expect(TransferProgress.timeLeft(0, of: 10, over: .seconds(1)) == nil)
        #expect(TransferProgress.timeLeft(10, of: 10, over: .seconds(1)) == nil)
        #expect(TransferProgress.timeLeft(1, of: 10, over: .seconds(1)) == .seconds(9))
        #expect(TransferProgress.timeLeft(1, of: .max, over: .seconds(1)) == .seconds(359_999), "capped at 99:59:59")
    }

    @Test func truncationKeepsTheStartAndTheExtension() {
        let text = TransferProgress.truncated("KizunaDemo-2024-10-31-release.ipa", toWidth: 20)
        #expect(text == "KizunaDemo…lease.ipa")
        #expect(TransferProgress.truncated("short.ipa", toWidth: 20) == "short.ipa")
        #expect(TransferProgress.truncated("絆デモアプリ.ipa", toWidth: 9) == "絆デ….ipa")
        #expect(TransferProgress.displayWidth("絆デモアプリ.ipa") == 16)
    }
}
