import Testing
@testable import IReporterKit

/// docs/SECURITY.md, "Text that hides or impersonates": one rule from
/// Unicode's properties for names, titles and comments (issues 24 and 26).
struct TextRulesTests {
    func check(_ text: String, as kind: TextRules.Kind) -> Result<String, TextRules.Violation> {
        Result { () throws(TextRules.Violation) in String(decoding: try TextRules.checked(Array(text.utf8), as: kind), as: UTF8.self) }
    }

    func refusal(_ text: String, as kind: TextRules.Kind) -> TextRules.Violation? {
        if case .failure(let violation) = check(text, as: kind) { violation } else { nil }
    }

    /// Issue 26's examples, each alone and inside words.
    @Test(arguments: ["\u{200B}", "\u{2060}", "\u{FEFF}", "\u{AD}", "\u{E0041}\u{E0042}", "\u{FFF9}", "\u{180E}",
                      "\u{3164}", "\u{115F}", "\u{FFA0}", "\u{34F}", "\u{E0100}", "\u{1D173}", "\u{2062}"])
    func invisibleCharactersAreRefusedEverywhere(_ invisible: String) {
        for kind in [TextRules.Kind.title, .comment] {
            #expect(refusal("a\(invisible)b", as: kind) == .invisible, "\(kind) \(invisible.unicodeScalars.map(\.value))")
            #expect(refusal(invisible, as: kind) == .invisible)
        }
        #expect(refusal("a\(invisible)b", as: .name) == .invisible)
    }

    @Test(arguments: ["   ", "\u{2800}", "\u{2800}\u{2800}", " \u{3000}\u{A0}", "\u{1D159}", "\u{2003}"])
    func blankTextIsRefused(_ blank: String) {
        #expect(refusal(blank, as: .title) == .blank)
        #expect(refusal(blank, as: .comment) == .blank)
        #expect(refusal("\n\(blank)\n", as: .comment) == .blank, "line breaks are not visible either")
    }

    @Test func blanksBetweenWordsStayInTitlesButNotInNames() {
        #expect(check("⠓⠑⠀⠇⠕", as: .title) == .success("⠓⠑⠀⠇⠕"), "braille text has blank cells between words")
        #expect(refusal("admin\u{2800}", as: .name) == .invisible, "issue 26: a Braille blank added to a name")
        #expect(refusal("\u{2800}", as: .name) == .invisible, "issue 26: a name of one Braille blank")
        #expect(refusal("ad\u{1D159}min", as: .name) == .invisible)
        #expect(check("ad min", as: .name) == .success("ad min"))
    }

    @Test(arguments: ["👨‍👩‍👧", "❤️", "❤️‍🔥", "🏳️‍🌈", "👩🏽‍💻", "🧑🏿‍🤝‍🧑🏻", "#️⃣", "1️⃣", "👁️‍🗨️", "☺︎",
                      "🏴󠁧󠁢󠁳󠁣󠁴󠁿", "🏴󠁧󠁢󠁷󠁬󠁳󠁿", "🇫🇷", "🫩"])
    func emojiSequencesKeepTheirJoinersAndSelectors(_ emoji: String) {
        #expect(check("Nice \(emoji)!", as: .title) == .success("Nice \(emoji)!"))
        #expect(check(emoji, as: .comment) == .success(emoji))
    }

    @Test func joinersAndSelectorsOutsideEmojiAreRefused() {
        #expect(refusal("a\u{200D}b", as: .comment) == .invisible)
        #expect(refusal("😀\u{200D}", as: .comment) == .invisible, "a joiner with nothing to join")
        #expect(refusal("\u{200D}😀", as: .comment) == .invisible)
        #expect(refusal("a\u{FE0F}", as: .comment) == .invisible, "a is not an emoji")
        #expect(refusal("❤\u{FE0F}\u{FE0F}", as: .comment) == .invisible, "one selector: a run could carry hidden bytes")
        #expect(refusal("😀\u{E0101}\u{E0102}", as: .comment) == .invisible, "bytes hidden in variation selectors")
        #expect(refusal("🏴\u{E0068}\u{E0069}\u{E0064}\u{E0064}\u{E0065}\u{E006E}\u{E0020}\u{E0074}\u{E007F}", as: .comment)
                == .invisible, "tag text that is no subdivision code")
        #expect(refusal("x\u{E0067}\u{E0062}\u{E007F}", as: .comment) == .invisible, "tags without the flag")
        #expect(refusal("🏴\u{E0067}\u{E0062}", as: .comment) == .invisible, "tags without their end")
        #expect(refusal("👨‍👩‍👧", as: .name) == .invisible, "a name has no invisible character at all")
    }

    @Test func scriptsKeepTheJoinersTheyNeed() {
        #expect(check("می\u{200C}خواهم", as: .comment) == .success("می\u{200C}خواهم"), "Persian: ZWNJ between joining letters")
        #expect(check("ශ්\u{200D}රී", as: .comment) == .success("ශ්\u{200D}රී"), "Sinhala: ZWJ after the virama")
        #expect(check("क्\u{200C}ष", as: .title) == .success("क्\u{200C}ष"), "Devanagari: ZWNJ after the virama")
        #expect(refusal("ab\u{200C}cd", as: .comment) == .invisible, "Latin letters do not join")
    }

    @Test func controlCharactersKeepTheirAnswer() {
        for text in ["a\u{0}b", "a\u{7F}b", "a\u{85}b", "a\u{2028}b", "a\u{2029}b", "evil\u{202E}gnp.jpg", "a\u{200E}b", "a\tb"] {
            #expect(refusal(text, as: .title) == .control, "\(text.unicodeScalars.map(\.value))")
            #expect(refusal(text, as: .comment) == .control)
        }
        #expect(refusal("first line\nsecond line", as: .title) == .control, "titles are one line")
    }

    /// Issue 24: line breaks in comments, as LF.
    @Test func commentsKeepLineBreaksAsLF() {
        #expect(check("first line\nsecond line", as: .comment) == .success("first line\nsecond line"))
        #expect(check("first line\r\nsecond line", as: .comment) == .success("first line\nsecond line"))
        #expect(check("first line\rsecond line\r", as: .comment) == .success("first line\nsecond line\n"))
        #expect(check("a\r\n\r\nb", as: .comment) == .success("a\n\nb"))
    }

    @Test func commentsHaveAtMostTwentyLines() {
        let twenty = (1...20).map(String.init).joined(separator: "\n")
        #expect(check(twenty, as: .comment) == .success(twenty))
        #expect(refusal(twenty + "\n21", as: .comment) == .tooManyLines)
        #expect(refusal("a" + String(repeating: "\r\n", count: 20), as: .comment) == .tooManyLines)
    }

    /// A title cut to its column keeps whole characters: no joiner or tag
    /// left at the end with nothing to show.
    @Test func aTitleIsCutBetweenCharacters() {
        func fitted(_ text: String) -> String {
            String(decoding: TextRules.fitting(Array(text.utf8), maxBytes: 100), as: UTF8.self)
        }
        let scotland = "🏴\u{E0067}\u{E0062}\u{E0073}\u{E0063}\u{E0074}\u{E007F}"
        #expect(fitted(String(repeating: "x", count: 90) + scotland) == String(repeating: "x", count: 90))
        #expect(fitted(String(repeating: "x", count: 85) + "👨‍👩‍👧") == String(repeating: "x", count: 85))
        #expect(fitted(String(repeating: "x", count: 99) + "e\u{301}") == String(repeating: "x", count: 99))
        #expect(fitted(String(repeating: "x", count: 97) + "€") == String(repeating: "x", count: 97) + "€")
    }

    @Test func theTableIsUnicodes() {
        #expect(TextPropertyTable.unicodeVersion == "15.0.0")
        #expect(TextPropertyTable.classes(of: "a").isEmpty)
        #expect(TextPropertyTable.classes(of: "\u{200B}").contains(.ignorable))
        #expect(TextPropertyTable.classes(of: "\u{0600}").isEmpty, "a Prepended_Concatenation_Mark is drawn")
        #expect(TextPropertyTable.classes(of: "\u{10FFFF}").contains(.unassignedOrPrivate))
        // Against the stdlib's own copy of the same properties, for the
        // characters of Unicode 15.0 and before.
        var differences: [String] = []
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value), let age = scalar.properties.age,
                  age.major < 15 || (age.major == 15 && age.minor == 0) else { continue }
            let properties = scalar.properties, classes = TextPropertyTable.classes(of: scalar)
            let ignorable = (properties.isDefaultIgnorableCodePoint || properties.generalCategory == .format)
                && !properties.isBidiControl && !Self.prependedConcatenationMarks.contains(value)
            if classes.contains(.whiteSpace) != properties.isWhitespace || classes.contains(.ignorable) != ignorable {
                differences.append(String(value, radix: 16))
            }
        }
        #expect(differences.isEmpty)
    }

    static let prependedConcatenationMarks: Set<UInt32> = [0x600, 0x601, 0x602, 0x603, 0x604, 0x605, 0x6DD, 0x70F, 0x890, 0x891,
                                                           0x8E2, 0x110BD, 0x110CD]
}
