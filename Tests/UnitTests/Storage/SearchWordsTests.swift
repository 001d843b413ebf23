import Testing
@testable import IReporterKit

/// The words the index stores and the query asks for.
struct SearchWordsTests {
    private func words(_ text: String) -> [String] {
        SearchWords.indexWords(Array(text.utf8)).map { String(decoding: $0, as: UTF8.self) }
    }

    private func terms(_ text: String) -> [String] {
        SearchWords.queryTerms(Array(text.utf8)).map { String(decoding: $0, as: UTF8.self) }
    }

    @Test func caseAndAccentsAreOneWord() {
        #expect(words("Zoë") == ["zoe"])
        #expect(words("ZOE") == ["zoe"])
        #expect(words("Zoe\u{308}") == ["zoe"], "decomposed accents too")
        #expect(words("Straße Æther Øre") == ["strasse", "aether", "ore"])
        #expect(words("Crème Brûlée, São Paulo") == ["creme", "brulee", "sao", "paulo"])
        #expect(words("ΣΟΦΙΑ Москва") == ["σοφια", "москва"], "other scripts are lowercased")
        #expect(words("İstanbul ISTANBUL") == ["istanbul"], "the dot İ's lowercase mapping adds is an accent")
        #expect(words("ΟΔΟΣ οδός Οδός") == ["οδοσ"], "Greek accents and the final sigma")
        #expect(words("ЁЖИК ёжик ежик") == ["ежик"], "ё as е")
        #expect(words("ｔｏｋｙｏ ＴＯＫＹＯ２０２４ tokyo") == ["tokyo", "tokyo2024"], "full-width Latin and digits")
        #expect(terms("ｔｏｋｙｏ") == ["tokyo"])
    }

    @Test func emojiAndPunctuationSeparate() {
        #expect(words("sun🌅set") == ["sun", "set"])
        #expect(words("👍🏽 party! 1️⃣ 🇫🇷") == ["party", "1"])
        #expect(words("🎉🎉🎉").isEmpty)
        #expect(terms(#"+sun -"moon" * @x 'a' OR 1=1; --"#) == ["sun", "moon", "x", "a", "or", "1"])
    }

    @Test func chineseAndJapaneseAreCharactersAndPairs() {
        #expect(words("東京タワー") == ["東", "京", "タ", "ワ", "ー", "東京", "京タ", "タワ", "ワー"])
        #expect(terms("京タワ") == ["京タ", "タワ"])
        #expect(terms("東京タワー") == ["東京", "タワ", "ワー"], "the pairs that cover it: the last two for an odd length")
        #expect(terms("東京スカイツリー") == ["東京", "スカ", "イツ", "リー"], "eight characters, four terms")
        #expect(terms("京") == ["京"])
        #expect(words("Tokyo東京2024") == ["tokyo", "東", "京", "東京", "2024"])
    }

    @Test func latin1BytesThatAreNotUTF8AreReadAsLatin1() {
        #expect(SearchWords.indexWords([0x5A, 0x6F, 0xEB]) == [Array("zoe".utf8)], "Zo\\xEB in latin1")
    }

    @Test func longWordsAreCutTheSameOnBothSides() {
        let long = String(repeating: "é", count: 100)
        #expect(SearchWords.indexWords(Array(long.utf8)) == [Array(String(repeating: "e", count: 64).utf8)])
        let cyrillic = String(repeating: "ж", count: 40)
        #expect(SearchWords.indexWords(Array(cyrillic.utf8))[0].count == 64, "cut between characters")
        #expect(SearchWords.queryTerms(Array(cyrillic.utf8)) == SearchWords.indexWords(Array(cyrillic.utf8)))
    }
}
