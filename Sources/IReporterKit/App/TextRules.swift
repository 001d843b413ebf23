/// One rule for the text people type and everyone sees: usernames, titles
/// and comments (docs/SECURITY.md, "Text that hides or impersonates"). It
/// reads Unicode's properties (`TextPropertyTable`, generated from the
/// Unicode data files), not a list of examples:
///
/// - control: General_Category Cc, Zl, Zp and Bidi_Control (they break
///   lines or reorder what follows) are refused; comments keep LF, with
///   CR LF and CR read as LF, up to `maxCommentLines` lines;
/// - invisible: Default_Ignorable_Code_Point and format (Cf) characters are
///   refused, except where emoji and scripts need them (`isNeededHere`);
/// - blank: White_Space and the blank look-alikes (U+2800) may separate
///   words, but a title or comment needs at least one visible character.
///
/// Names are stricter (a name must look like what it is): no invisible
/// character in any context, no blank look-alike, nothing private-use or
/// unassigned. `UsernameRules` adds the rest of the name's rules.
enum TextRules {
    enum Kind { case name, title, comment }

    enum Violation: Error {
        case notUTF8
        case control
        case invisible
        /// Only white space and blanks: nothing to see.
        case blank
        case tooManyLines
    }

    /// A comment is a few lines under a photo: 20 keeps the longest one
    /// within a phone's screen, where 1000 bytes of line breaks would push
    /// every other comment out of sight.
    static let maxCommentLines = 20

    /// The text to store, once it follows the rules: as sent, except that a
    /// comment's line breaks are LF.
    static func checked(_ text: [UInt8], as kind: Kind) throws(Violation) -> [UInt8] {
        let text = kind == .comment ? withLineFeeds(text) : text
        guard let string = String(validatingUTF8Bytes: text) else { throw .notUTF8 }
        let scalars = Array(string.unicodeScalars)
        var visible = false
        var lines = 1
        for index in scalars.indices {
            let scalar = scalars[index]
            if scalar == "\n" && kind == .comment {
                lines += 1
                if lines > maxCommentLines { throw .tooManyLines }
                continue
            }
            let classes = TextPropertyTable.classes(of: scalar)
            if classes.contains(.control) { throw .control }
            if kind == .name {
                if !classes.isDisjoint(with: [.ignorable, .blankLookalike, .unassignedOrPrivate]) { throw .invisible }
            } else if classes.contains(.ignorable) && !isNeededHere(scalars, index) {
                throw .invisible
            }
            if classes.isDisjoint(with: [.ignorable, .whiteSpace, .blankLookalike]) { visible = true }
        }
        if !scalars.isEmpty && !visible { throw .blank }
        return text
    }

    /// CR LF and a lone CR (old Macs, some web forms) as LF.
    private static func withLineFeeds(_ text: [UInt8]) -> [UInt8] {
        guard text.contains(0x0D) else { return text }
        var result: [UInt8] = []
        result.reserveCapacity(text.count)
        for (index, byte) in text.enumerated() {
            if byte != 0x0D {
                result.append(byte)
            } else if index + 1 == text.count || text[index + 1] != 0x0A {
                result.append(0x0A)
            }
        }
        return result
    }

    /// The invisible characters that text needs where they stand:
    /// - ZWJ inside an emoji ZWJ sequence (👨‍👩‍👧), FE0E / FE0F right after a
    ///   character that takes them (❤️), tags in a subdivision flag (UTS 51);
    /// - ZWJ after a virama, ZWNJ after a virama or between two letters
    ///   that join (Persian می‌خواهم): RFC 5892's CONTEXTJ rules.
    /// One selector per character: a run of them could carry hidden bytes.
    private static func isNeededHere(_ scalars: [Unicode.Scalar], _ index: Int) -> Bool {
        let previous = index > 0 ? TextPropertyTable.classes(of: scalars[index - 1]) : []
        switch scalars[index].value {
        case 0x200D:
            if previous.contains(.virama) { return true }
            let emojiBefore = !previous.isDisjoint(with: [.extendedPictographic, .emojiModifier])
                || (index > 1 && scalars[index - 1].value == 0xFE0F)
            return emojiBefore && index + 1 < scalars.count
                && TextPropertyTable.classes(of: scalars[index + 1]).contains(.extendedPictographic)
        case 0x200C:
            return previous.contains(.virama) || joins(scalars, from: index)
        case 0xFE0E, 0xFE0F:
            return previous.contains(.emojiVariationBase)
        case 0xE0020...0xE007F:
            return isInSubdivisionFlag(scalars, index)
        default:
            return false
        }
    }

    /// A letter that joins forward before `index` and one that joins back
    /// after it, with only transparent marks between.
    private static func joins(_ scalars: [Unicode.Scalar], from index: Int) -> Bool {
        func nearest(_ indices: some Sequence<Int>) -> TextCharacterClasses {
            for other in indices {
                let classes = TextPropertyTable.classes(of: scalars[other])
                if !classes.contains(.joinTransparent) { return classes }
            }
            return []
        }
        return nearest((0..<index).reversed()).contains(.joinsForward)
            && nearest((index + 1)..<scalars.count).contains(.joinsBackward)
    }

    /// 🏴, one to seven tag letters or digits (a subdivision code: gbsct for
    /// Scotland), CANCEL TAG.
    private static func isInSubdivisionFlag(_ scalars: [Unicode.Scalar], _ index: Int) -> Bool {
        let blackFlag: UInt32 = 0x1F3F4, cancelTag: UInt32 = 0xE007F
        func isCodeTag(_ value: UInt32) -> Bool { (0xE0030...0xE0039).contains(value) || (0xE0061...0xE007A).contains(value) }
        var start = index
        while start > 0, index - start < 8, (0xE0020...0xE007F).contains(scalars[start - 1].value) { start -= 1 }
        guard start > 0, scalars[start - 1].value == blackFlag else { return false }
        var end = start
        while end < scalars.count, end - start < 8, isCodeTag(scalars[end].value) { end += 1 }
        return (1...7).contains(end - start) && index <= end && end < scalars.count && scalars[end].value == cancelTag
    }

    /// Cut to `maxBytes` between two characters as a person sees them
    /// (extended grapheme clusters): never inside a UTF-8 sequence, and never
    /// inside an emoji sequence, which would leave a joiner or tags with
    /// nothing to show. Text that is not UTF-8 is cut at the byte.
    static func fitting(_ text: [UInt8], maxBytes: Int) -> [UInt8] {
        guard text.count > maxBytes else { return text }
        guard let string = String(validatingUTF8Bytes: text) else { return Array(text[..<maxBytes]) }
        var fitted: [UInt8] = []
        for character in string {
            let bytes = character.utf8
            if fitted.count + bytes.count > maxBytes { break }
            fitted += bytes
        }
        return fitted
    }
}

extension String {
    init?(validatingUTF8Bytes bytes: [UInt8]) {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: self = String(decoding: bytes, as: UTF8.self); return
            case .error: return nil
            }
        }
    }
}
