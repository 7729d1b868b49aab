/// The words of the structured forms' rows: a condition's rules, the OS requirement's windows, the OS advisories.
extension ConsoleText {
    static let englishRows: [ConsoleWord: String] = [
        .rulesHint:
            "A condition holds when every one of its rules does. A condition that uses any, not, an attribute or a time window is edited as JSON.",
        .ruleKindLabel: "Rule",
        .ruleValueLabel: "Value",
        .comparisonHint: "A version, or comparisons that must all hold: >= 3.0 < 4.0 (== != < <= > >=).",
        .percentHint: "A seed and a range of percent: new-ui 0-25.",
        .listHint: "One or more, separated by commas: ios, macos.",
        .ruleKindMissing: "Choose what the rule checks.",
        .conditionNeedsRule: "Add at least one rule.",
        .osWindowRow: "Window",
        .osWindowRowsHint:
            "Only inside these weekly windows is the new OS required (none: any time). A window ending before it starts runs overnight. Fill the empty one to add a window; empty one to remove it.",
        .daysLabel: "Days",
        .windowTimeHint: "A time of day: 02:00 (until 24:00 at most).",
        .osAdvisoryRow: "Advisory",
        .osAdvisoryRowsHint:
            "OS versions to warn about (an update not yet validated, a known bad one): fill the empty advisory to add one; empty one to remove it.",
        .osVersionsLabel: "OS versions",
        .platformsLabel: "Platforms (all when empty)",
        .actionLabel: "Action",
        .recommendAction: "Recommend an update",
        .requireAction: "Require an update",
        .mondayShort: "Mon", .tuesdayShort: "Tue", .wednesdayShort: "Wed", .thursdayShort: "Thu", .fridayShort: "Fri", .saturdayShort: "Sat",
        .sundayShort: "Sun",
    ]

    static let japaneseRows: [ConsoleWord: String] = [
        .rulesHint: "条件は、すべてのルールが満たされるときに成り立ちます。any・not・属性・時間帯を使う条件は JSON で編集します。",
        .ruleKindLabel: "ルール",
        .ruleValueLabel: "値",
        .comparisonHint: "バージョン、またはすべて満たすべき比較：>= 3.0 < 4.0（== != < <= > >=）。",
        .percentHint: "シードとパーセントの範囲：new-ui 0-25。",
        .listHint: "1 つ以上をカンマ区切りで：ios, macos。",
        .ruleKindMissing: "ルールで確認する項目を選んでください。",
        .conditionNeedsRule: "ルールを 1 つ以上追加してください。",
        .osWindowRow: "時間帯",
        .osWindowRowsHint: "新しい OS を必須にするのは、これらの毎週の時間帯の中だけです（なし：常時）。開始より前に終わる時間帯は翌日にまたがります。空の行に入力すると追加、すべて空にすると削除します。",
        .daysLabel: "曜日",
        .windowTimeHint: "時刻：02:00（最大 24:00）。",
        .osAdvisoryRow: "OS の注意",
        .osAdvisoryRowsHint: "注意を促す OS バージョン（未検証のアップデート、既知の不具合があるもの）：空の行に入力すると追加、すべて空にすると削除します。",
        .osVersionsLabel: "OS バージョン",
        .platformsLabel: "プラットフォーム（空ならすべて）",
        .actionLabel: "対応",
        .recommendAction: "アップデートを勧める",
        .requireAction: "アップデートを必須にする",
        .mondayShort: "月", .tuesdayShort: "火", .wednesdayShort: "水", .thursdayShort: "木", .fridayShort: "金", .saturdayShort: "土",
        .sundayShort: "日",
    ]
}
