import KizunaCore

/// The console's words. Every page's text is one of these, in English and Japanese (``ConsoleText``).
enum ConsoleWord: String, CaseIterable, Sendable {
    case console, signInTitle, tokenLabel, tokenHint, signInButton, signOutButton, signedOut, sessionEnded
    case badToken, signInLocked, badOrigin, badCSRF, language, skipToContent, mainNavigation
    case appsTitle, appsEmpty, newAppTitle, createButton, editAppTitle, saveButton, saved, created, deleted
    case deleteAppTitle, deleteAppWarning, deleteConfirmLabel, deleteButton, deleteMismatch, cancel
    case appID, appName, platform, bundleID, teamID, storeURL, updatedAt, actions, edit, delete
    case appIDHint, teamIDHint, storeURLHint
    case summaryHeading, notFound
    case settingsTab, configTitle, parametersTitle, conditionsTitle, conditionsHint, noParameters, noConditions
    case parameterName, parameterType, defaultValue, conditionalValues, group, description, conditionName, conditionWhen
    case liveVersion, neverPublished, editTemplateTitle, templateLabel, templateHint, notJSON, publishMessageLabel
    case publishButton, published, rolledBack, publishConflict, publishConflictHelp
    case historyTitle, versionColumn, authorColumn, messageColumn, liveMarker, rollbackButton, rollbackOf
    case diffTitle, diffFrom, diffTo, compareButton, noChanges, pathColumn, changeColumn, beforeColumn, afterColumn
    case added, removed, changed
    case simulatorTitle, simulateButton, appVersionLabel, buildNumberLabel, osVersionLabel, localeLabel, countryLabel
    case installIdLabel, installIdHint, attributesLabel, attributesHint, atLabel, atHint, unspecified, badAttribute
    case simulatedValues, valueColumn, decidedBy, defaultDecided, outcomeColumn, holds, doesNotHold
    case domainsTitle, domainSettingsLabel, domainSettingsHint, servedFileTitle, servedFileHint, fileSize, notJSONGeneric
    case gateTitle, livePolicyTitle, policyLabel, policyHint, gateSimulatorTitle, decisionTitle
    case usersTitle, usersEmpty, usersNoMatch, searchLabel, searchButton, nextPage, firstPage, pagesNavigation
    case identifierColumn, kindColumn, statusColumn, createdColumn, lastSignInColumn, sessionsColumn, passwordChangedColumn
    case never, accountID, emailKind, usernameKind, activeStatus, disabledStatus
    case devicesTitle, noDevices, deviceNameColumn, lastSeenColumn
    case userSessionsTitle, userSessionsHint, noUserSessions, appSessionKind, webSessionKind, endSessionButton, userSessionEnded
    case disableButton, enableButton, disableHint, enableHint, userDisabled, userEnabled
    case groupsTitle, groupsHint, noGroups, groupLabel, addGroupButton, removeButton, groupAdded, groupRemoved, groupNameInvalid
    case resetTitle, resetHint, resetButton, resetLinkHint, expiresColumn, deleteUserTitle, deleteUserWarning
    case healthTitle, healthHint, migratingNow, migrationStep, migrationProgress, startFailed, startingNow, instanceTitle
    case instanceReady, instanceNotReady, migrationTitle, migrationsApplied, requestsTitle, serverErrorsTitle, latencyTitle
    case activeRequestsTitle, poolInUseTitle, poolWaitTitle, dataJobsTitle, pushSentTitle, busiestRoutesTitle, routeColumn, meanColumn
    case releasesTitle, releasesHint, noReleases, channelColumn, sourceColumn, artifactsColumn, blockedStatus, blockButton
    case unblockButton, versionBlocked, versionUnblocked, gateChangeLink, gateChangedMeanwhile
    case dataTitle, modelsTitle, noSchema, modelColumn, fieldsColumn, schemaTitle, schemaHint, newestFirst, oldestFirst
    case filterTitle, filterFieldLabel, filterOperatorLabel, filterValueLabel, orderLabel, filterButton, noRecords
    case recordConflict, yourValue, storedValue
    case apiKeysTitle, apiKeysHint, noKeys, keyNameLabel, expiresInDaysLabel, wholeDaysNeeded, createKeyButton, newKeyLabel
    case keyCreatedHint, keyRevokedStatus, keyExpiredStatus, revokeButton, keyRevoked, lastUsedColumn
    case pushTitle, credentialsTitle, noCredentials, keyIdLabel, topicLabel, environmentLabel, eachDevicesOwn, keyFingerprintLabel
    case composeTitle, pushTitleLabel, pushBodyLabel, translationsLabel, translationsHint, badTranslation, badgeLabel, notWholeNumber
    case soundLabel, targetKindLabel, targetInstall, targetUser, targetCondition, targetAll, targetLabel, targetHint, targetNeeded
    case sendAtLabel, sendAtHint, localTimeLabel, fallbackTimeZoneLabel, fallbackTimeZoneHint, sendButton, pushJobsTitle, noPushJobs
    case sentColumn, failedColumn, skippedColumn, pendingColumn, finishedColumn, cancelJobButton, totalsTitle, reasonsTitle, noReasons
    case reasonColumn, countColumn, deliveriesTitle, attemptsColumn, pushReportTitle, pushScheduled, pushCancelled
    case newRow, editAsJSON, editAsForm, duplicateName, conditionalLineHint, formRowsHint
    case versionsTitle, minimumVersionLabel, recommendedVersionLabel, nagIntervalLabel, defaultLanguageLabel, blockedVersionsLabel
    case blockedVersionsHint, maintenanceTitle, maintenanceActiveLabel, windowFromLabel, windowUntilLabel, timeZoneLabel, windowHint
    case testersLabel, testersHint, osTitle, osVersionRequiredLabel, osDeadlineLabel, osDeadlineHint, osWindowsLabel, osWindowsHint
    case osAdvisoriesLabel, osAdvisoriesHint, noticesTitle, noticeURLLabel, noticeTextsLabel, noticeLineHint
    case rulesHint, ruleKindLabel, ruleValueLabel, comparisonHint, percentHint, listHint, ruleKindMissing, conditionNeedsRule
    case osWindowRow, osWindowRowsHint, daysLabel, windowTimeHint, osAdvisoryRow, osAdvisoryRowsHint, osVersionsLabel, platformsLabel
    case actionLabel, recommendAction, requireAction
    case mondayShort, tuesdayShort, wednesdayShort, thursdayShort, fridayShort, saturdayShort, sundayShort
}

/// The console's texts in one language, picked from a language switch (the `kizuna_console_lang` cookie) or else
/// `Accept-Language`: English and Japanese.
struct ConsoleText: Sendable {
    /// The language code, for `<html lang>`.
    let language: String
    private let words: [ConsoleWord: String]

    /// The languages there are texts for, in the switch's order, each named in itself.
    static let languages: [(code: String, name: String)] = [("en", "English"), ("ja", "日本語")]

    /// The texts in `chosen` when there are any, else in the first of `preferred` (from `Accept-Language`) there are,
    /// else English.
    init(chosen: String?, preferred: [String]) {
        let available = Set(Self.languages.map(\.code))
        let language = chosen.flatMap { available.contains($0) ? $0 : nil } ?? LocaleTag.negotiate(preferred, available: available)
        self.language = language
        words = language == "ja" ? Self.japanese : Self.english
    }

    /// Every word in English, and in Japanese: the tables of each part of the console together.
    static let english = [englishOperations, englishPush, englishGateForm, englishRows].reduce(englishApps) { all, part in
        all.merging(part) { _, _ in preconditionFailure("a console word has two English texts") }
    }
    static let japanese = [japaneseOperations, japanesePush, japaneseGateForm, japaneseRows].reduce(japaneseApps) { all, part in
        all.merging(part) { _, _ in preconditionFailure("a console word has two Japanese texts") }
    }

    subscript(_ word: ConsoleWord) -> String {
        words[word] ?? Self.english[word] ?? word.rawValue
    }

    /// The served file's size against the limit: `2,345 bytes of 131,072 (2 %)`.
    func sizeOf(bytes: Int, limit: Int, percent: Int) -> String {
        func grouped(_ number: Int) -> String {  // 131,072 in both languages, whatever the server's locale
            let digits = Array(String(number))
            return String(digits.enumerated().flatMap { index, digit in (index > 0 && (digits.count - index) % 3 == 0 ? [","] : []) + [digit] })
        }
        let (count, maximum) = (grouped(bytes), grouped(limit))
        return language == "ja" ? "\(maximum) バイト中 \(count) バイト（\(percent)%）" : "\(count) bytes of \(maximum) (\(percent) %)"
    }

    /// How a diff names a kind of change.
    func changeKind(_ kind: JSONChange.Kind) -> String {
        switch kind {
        case .added: self[.added]
        case .removed: self[.removed]
        case .changed: self[.changed]
        }
    }

    /// The label of an app field the admin API names in an error, for the field's message.
    func label(ofAppField field: String) -> String? {
        switch field {
        case "id": self[.appID]
        case "name": self[.appName]
        case "platform": self[.platform]
        case "bundleId": self[.bundleID]
        case "teamId": self[.teamID]
        case "storeURL": self[.storeURL]
        default: nil
        }
    }

    private static let englishApps: [ConsoleWord: String] = [
        .console: "Kizuna console",
        .signInTitle: "Sign in to the console",
        .tokenLabel: "Admin token",
        .tokenHint: "An admin token (kza_…) from “kizuna admin token create” or the first start's log. The browser keeps a session, never the token.",
        .signInButton: "Sign in",
        .signOutButton: "Sign out",
        .signedOut: "You are signed out.",
        .sessionEnded: "Your console session has ended. Sign in again.",
        .badToken: "That admin token is not valid or has been revoked.",
        .signInLocked: "Too many failed sign-ins from this address. Wait a little, then try again with a valid token.",
        .badOrigin: "This form must be sent from the console's own pages.",
        .badCSRF: "This form is out of date or was not sent from the console. Reload the page and try again.",
        .language: "Language",
        .skipToContent: "Skip to content",
        .mainNavigation: "Console sections",
        .appsTitle: "Apps",
        .appsEmpty: "No apps yet. Register your first app below.",
        .newAppTitle: "Register an app",
        .createButton: "Register app",
        .editAppTitle: "Edit app",
        .saveButton: "Save changes",
        .saved: "Changes saved.",
        .created: "App registered.",
        .deleted: "App deleted.",
        .deleteAppTitle: "Delete app",
        .deleteAppWarning:
            "Deleting an app removes its remote config, update gate, releases, data and push settings. This cannot be undone.",
        .deleteConfirmLabel: "Type the app's id to confirm",
        .deleteButton: "Delete app",
        .deleteMismatch: "The id you typed does not match this app's id.",
        .cancel: "Cancel",
        .appID: "App id",
        .appName: "Name",
        .platform: "Platform",
        .bundleID: "Bundle id",
        .teamID: "Apple team id",
        .storeURL: "Store URL",
        .updatedAt: "Updated",
        .actions: "Actions",
        .edit: "Edit",
        .delete: "Delete",
        .appIDHint: "Lowercase letters, digits and hyphens; what the SDK and the URLs use. It cannot change later.",
        .teamIDHint: "Ten characters, from the Apple Developer account. Required for Apple platforms.",
        .storeURLHint: "Where the update gate sends people to update.",
        .summaryHeading: "Please fix the following:",
        .notFound: "There is no such app.",
        .settingsTab: "Settings",
        .configTitle: "Remote config",
        .parametersTitle: "Parameters",
        .conditionsTitle: "Conditions",
        .conditionsHint: "Tried in this order; a parameter takes the value of the first condition that holds and has one.",
        .noParameters: "No parameters yet.",
        .noConditions: "No conditions yet.",
        .parameterName: "Parameter",
        .parameterType: "Type",
        .defaultValue: "Default",
        .conditionalValues: "Conditional values",
        .group: "Group",
        .description: "Description",
        .conditionName: "Condition",
        .conditionWhen: "When",
        .liveVersion: "Live version",
        .neverPublished: "Nothing has been published yet.",
        .editTemplateTitle: "Edit and publish",
        .templateLabel: "Template (JSON)",
        .templateHint: "The whole template: conditions in order and parameters by name, as kizuna config publish takes it.",
        .notJSON: "The template is not valid JSON",
        .publishMessageLabel: "What changed (kept in the history)",
        .publishButton: "Publish",
        .published: "Published.",
        .rolledBack: "Rolled back: the chosen version is live again as a new version.",
        .publishConflict: "Someone published while you were editing:",
        .publishConflictHelp:
            "Nothing was lost: your draft is below and the live version is unchanged. These are their changes since the version you started from; publish again to replace them with your draft.",
        .historyTitle: "History",
        .versionColumn: "Version",
        .authorColumn: "By",
        .messageColumn: "Message",
        .liveMarker: "Live",
        .rollbackButton: "Roll back to",
        .rollbackOf: "rollback of",
        .diffTitle: "Changes",
        .diffFrom: "From version",
        .diffTo: "to version",
        .compareButton: "Compare",
        .noChanges: "No changes.",
        .pathColumn: "Where",
        .changeColumn: "Change",
        .beforeColumn: "Before",
        .afterColumn: "After",
        .added: "added",
        .removed: "removed",
        .changed: "changed",
        .simulatorTitle: "Device simulator",
        .simulateButton: "Simulate",
        .appVersionLabel: "App version",
        .buildNumberLabel: "Build number",
        .osVersionLabel: "OS version",
        .localeLabel: "Locale",
        .countryLabel: "Country or region",
        .installIdLabel: "Install id",
        .installIdHint: "Percentage rollouts are decided by it; leave it empty to simulate a device without one.",
        .attributesLabel: "Attributes",
        .attributesHint: "One name=value per line, as the app sets them: true and false are booleans, numbers are numbers.",
        .atLabel: "At",
        .atHint: "The time date and weekly conditions are checked against, in ISO 8601 (2026-12-24T18:00:00+09:00); now when empty.",
        .unspecified: "Not given",
        .badAttribute: "Write each attribute as name=value",
        .simulatedValues: "What this device gets",
        .valueColumn: "Value",
        .decidedBy: "Decided by",
        .defaultDecided: "the default",
        .outcomeColumn: "For this device",
        .holds: "holds",
        .doesNotHold: "does not hold",
        .domainsTitle: "Associated domains",
        .domainSettingsLabel: "Settings (JSON)",
        .domainSettingsHint:
            "webCredentials, appLinks (rules in order, the first match decides), appLinkDefaults, appClips, legacyPaths and substitutionVariables, as the admin API takes them.",
        .servedFileTitle: "The served apple-app-site-association",
        .servedFileHint: "What /.well-known/apple-app-site-association answers for every app; iOS reads at most 128 KB of it.",
        .fileSize: "Size",
        .notJSONGeneric: "This is not valid JSON",
        .gateTitle: "Update gate",
        .livePolicyTitle: "Live policy",
        .policyLabel: "Policy (JSON)",
        .policyHint:
            "minimumVersion, recommendedVersion, blockedVersions, maintenance, minimumOSVersion and notices, as kizuna gate publish takes them.",
        .gateSimulatorTitle: "Gate simulator",
        .decisionTitle: "What this device is told",
    ]

    private static let japaneseApps: [ConsoleWord: String] = [
        .console: "Kizuna コンソール",
        .signInTitle: "コンソールにサインイン",
        .tokenLabel: "管理トークン",
        .tokenHint: "「kizuna admin token create」または初回起動時のログに出る管理トークン（kza_…）。ブラウザーが保持するのはセッションだけで、トークンは保持しません。",
        .signInButton: "サインイン",
        .signOutButton: "サインアウト",
        .signedOut: "サインアウトしました。",
        .sessionEnded: "コンソールのセッションが終了しました。もう一度サインインしてください。",
        .badToken: "この管理トークンは無効か、失効しています。",
        .signInLocked: "このアドレスからのサインインの失敗が多すぎます。しばらく待ってから、有効なトークンでもう一度お試しください。",
        .badOrigin: "このフォームはコンソールのページから送信してください。",
        .badCSRF: "このフォームは古いか、コンソールから送信されたものではありません。ページを再読み込みしてやり直してください。",
        .language: "言語",
        .skipToContent: "本文へ移動",
        .mainNavigation: "コンソールのセクション",
        .appsTitle: "アプリ",
        .appsEmpty: "アプリはまだありません。下のフォームから最初のアプリを登録してください。",
        .newAppTitle: "アプリを登録",
        .createButton: "アプリを登録",
        .editAppTitle: "アプリを編集",
        .saveButton: "変更を保存",
        .saved: "変更を保存しました。",
        .created: "アプリを登録しました。",
        .deleted: "アプリを削除しました。",
        .deleteAppTitle: "アプリを削除",
        .deleteAppWarning: "アプリを削除すると、リモート設定、アップデートゲート、リリース、データ、プッシュの設定も削除されます。元に戻せません。",
        .deleteConfirmLabel: "確認のためアプリ ID を入力してください",
        .deleteButton: "アプリを削除",
        .deleteMismatch: "入力された ID がこのアプリの ID と一致しません。",
        .cancel: "キャンセル",
        .appID: "アプリ ID",
        .appName: "名前",
        .platform: "プラットフォーム",
        .bundleID: "バンドル ID",
        .teamID: "Apple チーム ID",
        .storeURL: "ストア URL",
        .updatedAt: "更新日時",
        .actions: "操作",
        .edit: "編集",
        .delete: "削除",
        .appIDHint: "英小文字・数字・ハイフン。SDK と URL で使われ、あとから変更できません。",
        .teamIDHint: "Apple Developer アカウントの 10 文字の ID。Apple のプラットフォームでは必須です。",
        .storeURLHint: "アップデートゲートが更新を促すときの移動先。",
        .summaryHeading: "次の点を修正してください:",
        .notFound: "そのアプリはありません。",
        .settingsTab: "設定",
        .configTitle: "リモート設定",
        .parametersTitle: "パラメーター",
        .conditionsTitle: "条件",
        .conditionsHint: "この順に評価されます。パラメーターは、値を持つ条件のうち最初に成り立つものの値になります。",
        .noParameters: "パラメーターはまだありません。",
        .noConditions: "条件はまだありません。",
        .parameterName: "パラメーター",
        .parameterType: "型",
        .defaultValue: "既定値",
        .conditionalValues: "条件付きの値",
        .group: "グループ",
        .description: "説明",
        .conditionName: "条件",
        .conditionWhen: "成り立つとき",
        .liveVersion: "公開中のバージョン",
        .neverPublished: "まだ何も公開されていません。",
        .editTemplateTitle: "編集して公開",
        .templateLabel: "テンプレート（JSON）",
        .templateHint: "テンプレート全体：順序どおりの条件と名前ごとのパラメーター。kizuna config publish と同じ形式です。",
        .notJSON: "テンプレートが正しい JSON ではありません",
        .publishMessageLabel: "変更内容（履歴に残ります）",
        .publishButton: "公開",
        .published: "公開しました。",
        .rolledBack: "ロールバックしました。選んだバージョンが新しいバージョンとして公開されています。",
        .publishConflict: "編集中に別の人が公開しました:",
        .publishConflictHelp: "何も失われていません。下書きは下にあり、公開中のバージョンは変わっていません。以下は編集を始めたバージョン以降の相手の変更です。もう一度公開すると、下書きで置き換えます。",
        .historyTitle: "履歴",
        .versionColumn: "バージョン",
        .authorColumn: "公開した人",
        .messageColumn: "メッセージ",
        .liveMarker: "公開中",
        .rollbackButton: "ロールバック:",
        .rollbackOf: "ロールバック元",
        .diffTitle: "変更点",
        .diffFrom: "比較元バージョン",
        .diffTo: "比較先バージョン",
        .compareButton: "比較",
        .noChanges: "変更はありません。",
        .pathColumn: "場所",
        .changeColumn: "変更",
        .beforeColumn: "変更前",
        .afterColumn: "変更後",
        .added: "追加",
        .removed: "削除",
        .changed: "変更",
        .simulatorTitle: "端末シミュレーター",
        .simulateButton: "シミュレート",
        .appVersionLabel: "アプリのバージョン",
        .buildNumberLabel: "ビルド番号",
        .osVersionLabel: "OS のバージョン",
        .localeLabel: "ロケール",
        .countryLabel: "国または地域",
        .installIdLabel: "インストール ID",
        .installIdHint: "割合による配信はこの ID で決まります。空欄なら ID のない端末としてシミュレートします。",
        .attributesLabel: "属性",
        .attributesHint: "1 行に 1 つ、名前=値 の形で。true と false は真偽値、数字は数値になります。",
        .atLabel: "日時",
        .atHint: "日付や曜日の条件を判定する日時（ISO 8601、例 2026-12-24T18:00:00+09:00）。空欄なら現在。",
        .unspecified: "指定なし",
        .badAttribute: "属性は 名前=値 の形で書いてください",
        .simulatedValues: "この端末が受け取る値",
        .valueColumn: "値",
        .decidedBy: "決め手",
        .defaultDecided: "既定値",
        .outcomeColumn: "この端末では",
        .holds: "成り立つ",
        .doesNotHold: "成り立たない",
        .domainsTitle: "関連ドメイン",
        .domainSettingsLabel: "設定（JSON）",
        .domainSettingsHint: "webCredentials、appLinks（順に評価され最初に一致したものが有効）、appLinkDefaults、appClips、legacyPaths、substitutionVariables。管理 API と同じ形式です。",
        .servedFileTitle: "配信中の apple-app-site-association",
        .servedFileHint: "/.well-known/apple-app-site-association が全アプリ分として返す内容。iOS が読むのは 128 KB までです。",
        .fileSize: "サイズ",
        .notJSONGeneric: "正しい JSON ではありません",
        .gateTitle: "アップデートゲート",
        .livePolicyTitle: "公開中のポリシー",
        .policyLabel: "ポリシー（JSON）",
        .policyHint: "minimumVersion、recommendedVersion、blockedVersions、maintenance、minimumOSVersion、notices。kizuna gate publish と同じ形式です。",
        .gateSimulatorTitle: "ゲートシミュレーター",
        .decisionTitle: "この端末への判定",
    ]
}
