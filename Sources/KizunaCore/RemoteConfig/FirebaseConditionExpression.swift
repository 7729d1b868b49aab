/// A Firebase Remote Config condition expression, parsed: the syntax tree only, with no meaning attached.
///
/// The grammar, as Firebase's REST templates write it (`!` binds tighter than `&&`, which binds tighter than `||`):
/// ```
/// expression := and ('||' and)*
/// and        := unary ('&&' unary)*
/// unary      := '!' unary | '(' expression ')' | 'true' | 'false' | element test
/// element    := name ('.' name | '[' string ']')* ['(' literals ')']    app.version, app.userProperty['plan'], percent('seed')
/// test       := ('==' | '!=' | '<' | '<=' | '>' | '>=') literal          device.os == 'ios', percent <= 25
///             | 'in' literal                                             device.country in ['jp', 'us']
///             | 'between' literal 'and' literal                          percent('seed') between 0 and 25
///             | '.' (name | operator) '(' literals ')'                   app.version.>=(['3.1.0']), .exactlyMatches(['pro'])
/// literal    := string | number | '[' literals ']' | '(' literals ')' | name '(' literals ')'   dateTime('…', 'Asia/Tokyo')
/// ```
/// ``FirebaseConditionTranslator`` gives the tree its Kizuna meaning.
package indirect enum FirebaseExpression: Sendable, Hashable {
    case and([FirebaseExpression])
    case or([FirebaseExpression])
    case not(FirebaseExpression)
    case constant(Bool)
    /// One element and its test, with the text it was parsed from for messages.
    case atom(FirebaseAtom)

    /// Parses `text`.
    /// - Throws: ``FirebaseExpressionSyntaxError`` naming where the text stops making sense.
    package init(parsing text: String) throws(FirebaseExpressionSyntaxError) {
        var parser = Parser(tokens: try Tokenizer.tokens(of: text), text: text)
        let expression = try parser.expression()
        guard parser.atEnd else { throw parser.error("unexpected \(parser.peek.map(\.kind.display) ?? "end")") }
        self = expression
    }
}

/// A test on one element, such as `app.version.>=(['3.1.0'])`.
package struct FirebaseAtom: Sendable, Hashable {
    /// The dotted name, such as `app.version` or `app.userProperty`.
    package var element: String
    /// The key in brackets, such as `plan` in `app.userProperty['plan']`.
    package var key: String?
    /// Arguments of a called element, such as the seed of `percent('seed')`; `nil` when not called.
    package var arguments: [FirebaseLiteral]?
    /// The test, such as `>=` with `['3.1.0']`; the operator is `between`, `in` or a method name when not infix.
    package var test: Test
    /// The atom as written.
    package var text: String

    package enum Test: Sendable, Hashable {
        /// `element <op> literal` for `== != < <= > >=`, `in`.
        case infix(String, FirebaseLiteral)
        /// `element.<name>(literals)`, where the name can be an operator: `app.version.>=(['3.1.0'])`.
        case method(String, [FirebaseLiteral])
        /// `element between low and high`.
        case between(FirebaseLiteral, FirebaseLiteral)
    }
}

/// A value in an expression.
package indirect enum FirebaseLiteral: Sendable, Hashable {
    case string(String)
    case number(Double)
    /// `['a', 'b']`, or a parenthesised tuple.
    case list([FirebaseLiteral])
    /// `dateTime('2026-12-01T00:00:00', 'Asia/Tokyo')`.
    case call(String, [FirebaseLiteral])

    /// The strings of a list, or the one string; `nil` when anything else is there.
    package var strings: [String]? {
        switch self {
        case .string(let text): return [text]
        case .list(let items):
            var strings: [String] = []
            for item in items {
                guard case .string(let text) = item else { return nil }
                strings.append(text)
            }
            return strings
        default: return nil
        }
    }

    /// The number, or a one-element list or string holding one.
    package var number: Double? {
        switch self {
        case .number(let value): return value
        case .string(let text): return Double(text)
        case .list(let items) where items.count == 1: return items[0].number
        default: return nil
        }
    }

    /// The one list among `operands` (`exactlyMatches(['a', 'b'])`), or the operands as a list.
    package static func flattened(_ operands: [FirebaseLiteral]) -> FirebaseLiteral {
        if operands.count == 1, case .list = operands[0] { return operands[0] }
        return .list(operands)
    }
}

/// Why an expression could not be read, with the character offset where reading stopped.
package struct FirebaseExpressionSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    package let offset: Int
    package let reason: String
    package var description: String { "\(reason) at character \(offset + 1)" }
}

private struct Token: Sendable {
    enum Kind: Sendable, Hashable {
        case name(String), string(String), number(Double), symbol(String)

        var display: String {
            switch self {
            case .name(let name): "'\(name)'"
            case .string(let text): "the string '\(text)'"
            case .number(let number): "the number \(number)"
            case .symbol(let symbol): "'\(symbol)'"
            }
        }
    }

    let kind: Kind
    /// Character offsets of the token in the text.
    let start: Int
    let end: Int
}

private enum Tokenizer {
    static let symbols = ["&&", "||", "==", "!=", "<=", ">=", "<", ">", "!", "(", ")", "[", "]", ",", "."]

    static func tokens(of text: String) throws(FirebaseExpressionSyntaxError) -> [Token] {
        let characters = Array(text)
        var tokens: [Token] = []
        var index = 0
        while index < characters.count {
            let character = characters[index]
            let start = index
            if character.isWhitespace {
                index += 1
            } else if character == "'" || character == "\"" {
                var value = ""
                index += 1
                while index < characters.count, characters[index] != character {
                    if characters[index] == "\\", index + 1 < characters.count { index += 1 }
                    value.append(characters[index])
                    index += 1
                }
                guard index < characters.count else { throw FirebaseExpressionSyntaxError(offset: start, reason: "unterminated string") }
                index += 1
                tokens.append(Token(kind: .string(value), start: start, end: index))
            } else if character.isASCIIDigit || (character == "-" && index + 1 < characters.count && characters[index + 1].isASCIIDigit) {
                index += 1
                while index < characters.count, characters[index].isASCIIDigit || characters[index] == "." { index += 1 }
                let literal = String(characters[start..<index])
                guard let number = Double(literal) else { throw FirebaseExpressionSyntaxError(offset: start, reason: "'\(literal)' is not a number") }
                tokens.append(Token(kind: .number(number), start: start, end: index))
            } else if character.isASCIILetter || character == "_" {
                while index < characters.count, characters[index].isASCIILetter || characters[index].isASCIIDigit || characters[index] == "_" {
                    index += 1
                }
                tokens.append(Token(kind: .name(String(characters[start..<index])), start: start, end: index))
            } else if let symbol = symbols.first(where: { matches($0, characters, at: index) }) {
                index += symbol.count
                tokens.append(Token(kind: .symbol(symbol), start: start, end: index))
            } else {
                throw FirebaseExpressionSyntaxError(offset: start, reason: "unexpected '\(character)'")
            }
        }
        return tokens
    }

    private static func matches(_ symbol: String, _ characters: [Character], at index: Int) -> Bool {
        let symbol = Array(symbol)
        return index + symbol.count <= characters.count && Array(characters[index..<index + symbol.count]) == symbol
    }
}

private struct Parser {
    let tokens: [Token]
    let text: String
    var position = 0

    init(tokens: [Token], text: String) {
        self.tokens = tokens
        self.text = text
    }

    var atEnd: Bool { position == tokens.count }
    var peek: Token? { position < tokens.count ? tokens[position] : nil }

    func error(_ reason: String) -> FirebaseExpressionSyntaxError {
        FirebaseExpressionSyntaxError(offset: peek?.start ?? text.count, reason: reason)
    }

    mutating func take(_ symbol: String) -> Bool {
        guard peek?.kind == .symbol(symbol) else { return false }
        position += 1
        return true
    }

    mutating func takeName(_ name: String) -> Bool {
        guard peek?.kind == .name(name) else { return false }
        position += 1
        return true
    }

    mutating func expect(_ symbol: String) throws(FirebaseExpressionSyntaxError) {
        guard take(symbol) else { throw error("expected '\(symbol)', found \(peek.map(\.kind.display) ?? "the end")") }
    }

    mutating func expression() throws(FirebaseExpressionSyntaxError) -> FirebaseExpression {
        var terms = [try conjunction()]
        while take("||") { terms.append(try conjunction()) }
        return terms.count == 1 ? terms[0] : .or(terms)
    }

    mutating func conjunction() throws(FirebaseExpressionSyntaxError) -> FirebaseExpression {
        var terms = [try unary()]
        while take("&&") { terms.append(try unary()) }
        return terms.count == 1 ? terms[0] : .and(terms)
    }

    mutating func unary() throws(FirebaseExpressionSyntaxError) -> FirebaseExpression {
        if take("!") { return .not(try unary()) }
        if take("(") {
            let inner = try expression()
            try expect(")")
            return inner
        }
        if takeName("true") { return .constant(true) }
        if takeName("false") { return .constant(false) }
        return .atom(try atom())
    }

    mutating func atom() throws(FirebaseExpressionSyntaxError) -> FirebaseAtom {
        guard let first = peek, case .name(var element) = first.kind else {
            throw error("expected a condition element such as app.version, found \(peek.map(\.kind.display) ?? "the end")")
        }
        position += 1
        var key: String?
        var test: FirebaseAtom.Test?
        while test == nil {
            if take("[") {
                guard let token = peek, case .string(let name) = token.kind else { throw error("expected a quoted key") }
                position += 1
                key = name
                try expect("]")
            } else if take(".") {
                guard let token = peek else { throw error("expected a name after '.'") }
                position += 1
                switch token.kind {
                case .name(let name) where peek?.kind != .symbol("("): element += ".\(name)"
                case .name(let name), .symbol(let name):
                    try expect("(")
                    test = .method(name, try literals(until: ")"))
                default: throw error("expected a name after '.'")
                }
            } else {
                break
            }
        }
        var arguments: [FirebaseLiteral]?
        if test == nil, take("(") { arguments = try literals(until: ")") }
        if test == nil {
            guard let token = peek else { throw error("expected a comparison after '\(element)'") }
            switch token.kind {
            case .symbol(let op) where ["==", "!=", "<", "<=", ">", ">="].contains(op):
                position += 1
                test = .infix(op, try literal())
            case .name("in"):
                position += 1
                test = .infix("in", try literal())
            case .name("between"):
                position += 1
                let low = try literal()
                guard takeName("and") else { throw error("expected 'and' in 'between … and …'") }
                test = .between(low, try literal())
            default:
                throw error("expected a comparison after '\(element)', found \(token.kind.display)")
            }
        }
        let end = tokens[position - 1].end
        let written = String(Array(text)[first.start..<end])
        return FirebaseAtom(element: element, key: key, arguments: arguments, test: test!, text: written)
    }

    mutating func literals(until closing: String) throws(FirebaseExpressionSyntaxError) -> [FirebaseLiteral] {
        var items: [FirebaseLiteral] = []
        if take(closing) { return items }
        repeat { items.append(try literal()) } while take(",")
        try expect(closing)
        return items
    }

    mutating func literal() throws(FirebaseExpressionSyntaxError) -> FirebaseLiteral {
        guard let token = peek else { throw error("expected a value, found the end") }
        position += 1
        switch token.kind {
        case .string(let value): return .string(value)
        case .number(let value): return .number(value)
        case .symbol("["): return .list(try literals(until: "]"))
        case .symbol("("): return .list(try literals(until: ")"))
        case .name(let name) where take("("): return .call(name, try literals(until: ")"))
        default:
            position -= 1
            throw error("expected a value, found \(token.kind.display)")
        }
    }
}
