/// The words and numbers of a progress display, pure functions of their inputs.
extension TransferProgress {
    /// A byte count in decimal units with one decimal, as `ByteCountFormatter` writes file sizes: `512 B`, `1.5 kB`,
    /// `460.2 MB`, `1.0 GB`. Written by hand because Foundation's formatter words and rounds differently on Linux.
    static func bytes(_ count: Int64) -> String {
        let count = max(count, 0)
        guard count >= 1000 else { return "\(count) B" }
        let names = ["kB", "MB", "GB", "TB", "PB", "EB"]
        var unit: Int64 = 1000
        for (index, name) in names.enumerated() {
            // Tenths of the unit, rounded half up, without an addition that could overflow near Int64.max.
            let tenth = unit / 10
            let tenths = count / tenth + (count % tenth * 2 >= tenth ? 1 : 0)
            // 999.96 kB would round to "1000.0 kB": the next unit says it better.
            if tenths < 10_000 || index == names.count - 1 { return "\(tenths / 10).\(tenths % 10) \(name)" }
            unit *= 1000
        }
        return ""  // unreachable: the last unit always returns
    }

    /// A rate such as `82.4 MB/s`, or nil before any time has passed or any byte has moved.
    static func rate(_ done: Int64, over elapsed: Duration) -> String? {
        let seconds = seconds(elapsed)
        guard seconds > 0, done > 0 else { return nil }
        return "\(bytes(Int64(min(Double(done) / seconds, 9e18))))/s"
    }

    /// The time left at the average rate so far in whole seconds, rounded up so a countdown that is still running never
    /// says 0:00; nil when there is no rate yet or nothing is left.
    static func timeLeft(_ done: Int64, of total: Int64, over elapsed: Duration) -> Duration? {
        let seconds = seconds(elapsed)
        guard seconds > 0, done > 0, total > done else { return nil }
        // The whole run's average, not a recent window: steadier, and one connection's rate seldom swings far.
        let left = Double(total - done) / (Double(done) / seconds)
        return .seconds(min(left.rounded(.up), 359_999))
    }

    /// Whole percent, rounded down so 100 % means done; 0 when the total is 0 (the finish says 100).
    static func percent(_ done: Int64, of total: Int64) -> Int {
        guard total > 0 else { return 0 }
        return Int(min(done, total) * 100 / total)
    }

    /// The percentage for the terminal line, padded to four columns so the figures after it do not jump.
    static func percentFigure(_ done: Int64, of total: Int64, finished: Bool) -> String {
        let text = "\(finished ? 100 : percent(done, of: total))%"
        return String(repeating: " ", count: 4 - text.count) + text
    }

    /// `m:ss`, or `h:mm:ss` from an hour, to the nearest second.
    static func clock(_ duration: Duration) -> String {
        let total = max(Int(seconds(duration).rounded()), 0)
        let (hours, minutes, seconds) = (total / 3600, total / 60 % 60, total % 60)
        let ss = seconds < 10 ? "0\(seconds)" : "\(seconds)"
        guard hours > 0 else { return "\(minutes):\(ss)" }
        return "\(hours):\(minutes < 10 ? "0" : "")\(minutes):\(ss)"
    }

    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

/// Fitting the terminal line to the window.
extension TransferProgress {
    static let barWidths = 10...30
    static let shortestLabel = 12

    /// A figure after the bar, and the columns kept for it however wide its text is now, so the bar keeps its width
    /// while `9.9 MB/s` becomes `10.0 MB/s`. An empty text keeps its columns free until it has something to say.
    /// In a narrow window the figure with the lowest `priority` goes first.
    struct Figure {
        var text: String
        var reserve: Int
        var priority: Int
    }

    /// The terminal line for a window `columns` wide: the label, a bar `filled` (0...1) and the `figures`, two spaces
    /// apart. As the window narrows the bar shrinks, then the label is shortened with … (to no less than
    /// ``shortestLabel`` columns), then the bar goes; when even that does not fit, figures go, the least
    /// important first. The last column stays empty: writing into it makes some terminals wrap, and `\r` would then
    /// redraw only the second row.
    static func layout(label: String, filled: Double, figures: [Figure], columns: Int) -> String {
        let room = max(columns - 1, 1)
        let labelWidth = displayWidth(label)
        var figures = figures
        while true {
            let tail = figures.map(\.text).filter { !$0.isEmpty }.joined(separator: "  ")
            let kept = figures.reduce(2 * (figures.count - 1)) { $0 + max(displayWidth($1.text), $1.reserve) }
            let tailWidth = max(displayWidth(tail), kept)
            let withBar = room - tailWidth - 6  // two gaps of two spaces and the bar's brackets
            if withBar - labelWidth >= barWidths.lowerBound {
                return "\(label)  \(bar(filled, width: min(withBar - labelWidth, barWidths.upperBound)))  \(tail)"
            }
            if withBar - barWidths.lowerBound >= shortestLabel {
                let shortened = truncated(label, toWidth: withBar - barWidths.lowerBound)
                return "\(shortened)  \(bar(filled, width: barWidths.lowerBound))  \(tail)"
            }
            let withoutBar = room - tailWidth - 2
            if withoutBar >= min(labelWidth, shortestLabel) {
                return "\(truncated(label, toWidth: withoutBar))  \(tail)"
            }
            if figures.count > 1, let least = figures.indices.min(by: { figures[$0].priority < figures[$1].priority }) {
                figures.remove(at: least)
                continue
            }
            return truncated(withoutBar > 0 ? "\(truncated(label, toWidth: withoutBar))  \(tail)" : tail, toWidth: room)
        }
    }

    /// `[#####-----]` with `width` marks between the brackets.
    static func bar(_ filled: Double, width: Int) -> String {
        let marks = Int((max(0, min(filled, 1)) * Double(width)).rounded(.down))
        return "[" + String(repeating: "#", count: marks) + String(repeating: "-", count: width - marks) + "]"
    }

    /// `text` in at most `width` columns: whole when it fits, else its start and end around an ellipsis, so a file's
    /// distinguishing suffix and extension survive (`KizunaDemo-2…-release.ipa`).
    static func truncated(_ text: String, toWidth width: Int) -> String {
        guard displayWidth(text) > width else { return text }
        guard width > 1 else { return width == 1 ? "…" : "" }
        var tailRoom = (width - 1) / 2
        var headRoom = width - 1 - tailRoom
        var head = ""
        for character in text {
            let used = columns(of: character)
            guard used <= headRoom else { break }
            head.append(character)
            headRoom -= used
        }
        var tail: [Character] = []
        for character in text.reversed() {
            let used = columns(of: character)
            guard used <= tailRoom else { break }
            tail.append(character)
            tailRoom -= used
        }
        return head + "…" + String(tail.reversed())
    }

    /// The columns a terminal gives `text`: two for East Asian wide characters and emoji, one for the rest. A close
    /// enough reading of Unicode's East Asian Width that a Japanese or Chinese file name does not wrap the line.
    static func displayWidth(_ text: some StringProtocol) -> Int {
        text.reduce(0) { $0 + columns(of: $1) }
    }

    private static func columns(of character: Character) -> Int {
        guard let scalar = character.unicodeScalars.first else { return 0 }
        if scalar.properties.isEmojiPresentation { return 2 }
        switch scalar.value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
            0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x20000...0x3FFFD:
            return 2
        default:
            return 1
        }
    }
}
