/// The words `search` matches, the same rules for the text indexed (titles,
/// usernames) and for the query: the columns hold whatever bytes the app
/// sent (UTF-8 in latin1 columns), so the bytes are read as UTF-8 (as Latin-1
/// when they are not valid UTF-8), lowercased and stripped of accents
/// ("Zoë", "ZOE" and "zoe" are one word; Greek's accents and final sigma,
/// Cyrillic ё, full-width Latin too), and anything that is not a letter,
/// digit or mark separates words (emoji, punctuation, operators). A change
/// of these rules needs `ireporter search-index --restart` for the titles
/// indexed before it (docs/DEPLOY.md).
///
/// Chinese and Japanese are written without spaces: a run of those
/// characters is indexed as its single characters and its pairs, and a query
/// run of two or more characters asks for pairs that cover it, so any part
/// of a title is found (the usual bigram rule of full-text engines).
public enum SearchWords {
    /// A word's bytes at most: longer words are cut (at a character), the
    /// same way in the index and in the query, so they still match.
    public static let maxWordBytes = 64

    /// The distinct words of a title or username, as stored in the index.
    public static func indexWords(_ text: [UInt8]) -> [[UInt8]] {
        var words: [[UInt8]] = []
        for run in runs(text) {
            if run.isCJK {
                words += run.scalars.map { encode([$0]) }
                if run.scalars.count > 1 {
                    words += (1..<run.scalars.count).map { encode([run.scalars[$0 - 1], run.scalars[$0]]) }
                }
            } else {
                words.append(encode(run.scalars))
            }
        }
        var seen = Set<[UInt8]>()
        return words.filter { seen.insert($0).inserted }
    }

    /// The terms of a query, each to be matched as the start of a word. A
    /// CJK run asks for the pairs that cover it (the first and second
    /// characters, the third and fourth, …, and the last two when its length
    /// is odd), not for every pair: a title holding the run holds them all,
    /// and an eight-character name (東京スカイツリー) is four terms, within
    /// the query's limit, where its seven pairs were refused.
    public static func queryTerms(_ text: [UInt8]) -> [[UInt8]] {
        var terms: [[UInt8]] = []
        for run in runs(text) {
            if run.isCJK, run.scalars.count > 1 {
                let count = run.scalars.count
                let starts = Array(stride(from: 0, to: count - 1, by: 2)) + (count % 2 == 1 ? [count - 2] : [])
                terms += starts.map { encode([run.scalars[$0], run.scalars[$0 + 1]]) }
            } else {
                terms.append(encode(run.scalars))
            }
        }
        var seen = Set<[UInt8]>()
        return terms.filter { seen.insert($0).inserted }
    }

    private struct Run {
        var scalars: [Unicode.Scalar] = []
        var isCJK = false
    }

    /// The text cut into runs of word characters (CJK runs apart from others).
    private static func runs(_ text: [UInt8]) -> [Run] {
        var runs: [Run] = []
        var current = Run()
        func close() {
            if !current.scalars.isEmpty { runs.append(current) }
            current = Run()
        }
        for scalar in StoredText.scalars(text) {
            if isCombiningAccent(scalar) { continue }
            guard isWordCharacter(scalar) else { close(); continue }
            let cjk = isCJK(scalar)
            if cjk != current.isCJK { close(); current.isCJK = cjk }
            current.scalars += folded(scalar)
        }
        close()
        return runs
    }

    private static func isWordCharacter(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
             .decimalNumber, .letterNumber, .otherNumber, .nonspacingMark, .spacingMark, .enclosingMark:
            return !isEmojiPart(scalar)
        default:
            return false
        }
    }

    /// The marks that only shape an emoji: variation selectors and the keycap.
    private static func isEmojiPart(_ scalar: Unicode.Scalar) -> Bool {
        (0xFE00...0xFE0F).contains(scalar.value) || scalar.value == 0x20E3 || (0xE0100...0xE01EF).contains(scalar.value)
    }

    /// U+0300–U+036F: the accents of decomposed Latin, Greek and Cyrillic text.
    private static func isCombiningAccent(_ scalar: Unicode.Scalar) -> Bool {
        (0x300...0x36F).contains(scalar.value)
    }

    private static func isCJK(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x3040...0x30FF, 0x31F0...0x31FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xF900...0xFAFF, 0x20000...0x3FFFF:
            return true
        default:
            return false
        }
    }

    /// Lowercased (the accent a lowercase mapping adds dropped: `İ` is
    /// `i`), accents folded, full-width Latin and digits (what a Japanese
    /// keyboard types: `ｔｏｋｙｏ`) as ASCII.
    private static func folded(_ scalar: Unicode.Scalar) -> [Unicode.Scalar] {
        if (0xFF01...0xFF5E).contains(scalar.value), let narrow = Unicode.Scalar(scalar.value - 0xFEE0) {
            return folded(narrow)
        }
        let lower = scalar.properties.lowercaseMapping.unicodeScalars
        return lower.filter { !isCombiningAccent($0) }.flatMap { foldings[$0] ?? [$0] }
    }

    private static func encode(_ scalars: [Unicode.Scalar]) -> [UInt8] {
        var bytes: [UInt8] = []
        for scalar in scalars {
            let utf8 = Array(String(Character(scalar)).utf8)
            if bytes.count + utf8.count > maxWordBytes { break }
            bytes += utf8
        }
        return bytes
    }

    /// Accented Latin letters to their base letters (lowercase only: text is
    /// lowercased first). Each group is the base, then the letters folded to it.
    private static let foldings: [Unicode.Scalar: [Unicode.Scalar]] = {
        let table = """
            aàáâãäåāăąǎǟǡǻȁȃȧḁạảấầẩẫậắằẳẵặ aeæ bḃḅḇ cçćĉċčḉ dðďđḋḍḏḑḓ \
            eèéêëēĕėęěȅȇȩḕḗḙḛḝẹẻẽếềểễệ fḟ gĝğġģǧǵḡ hĥħȟḣḥḧḩḫẖ iìíîïĩīĭįıǐȉȋḭḯỉị jĵǰ \
            kķĸǩḱḳḵ lĺļľŀłḷḹḻḽ mḿṁṃ nñńņňŉǹṅṇṉṋ oòóôõöøōŏőơǒǫǭȍȏȫȭȯȱṍṏṑṓọỏốồổỗộớờởỡợ oeœ \
            pṕṗ rŕŗřȑȓṙṛṝṟ sśŝşšșṡṣṥṧṩ ssß tţťŧțṫṭṯṱẗ thþ uùúûüũūŭůűųưǔǖǘǚǜȕȗṳṵṷṹṻụủứừửữự \
            vṽṿ wŵẁẃẅẇẉẘ xẋẍ yýÿŷȳẏẙỳỵỷỹ zźżžẑẓẕ
            """
        var map: [Unicode.Scalar: [Unicode.Scalar]] = [:]
        for group in table.split(separator: " ") {
            let scalars = Array(group.unicodeScalars)
            let baseLength = scalars.prefix { $0.isASCII }.count
            for letter in scalars[baseLength...] { map[letter] = Array(scalars[..<baseLength]) }
        }
        // Greek: the accented vowels (tonos, dialytika) and the final sigma;
        // Cyrillic: ё, which Russian text often writes as е. Each group is
        // the base, then the letters folded to it.
        for group in "αά εέ ηή ιίϊΐ οό υύϋΰ ωώ σς её".split(separator: " ") {
            let scalars = Array(group.unicodeScalars)
            for letter in scalars.dropFirst() { map[letter] = [scalars[0]] }
        }
        return map
    }()
}
