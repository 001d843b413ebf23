import Testing
@testable import IReporterKit

struct PHPStringsTests {
    @Test(arguments: [
        ("c+d%21", "c d!"), ("a+b%41", "a bA"), ("100%", "100%"), ("%zz%4", "%zz%4"),
        ("%e2%98%95", "☕"), ("%E2%98%95", "☕"), ("plain", "plain"), ("", ""), ("%", "%"),
    ])
    func urlDecodeMatchesPHP(input: String, expected: String) {
        #expect(PHPStrings.urlDecode(Array(input.utf8)) == Array(expected.utf8))
    }

    @Test func urlDecodeKeepsNULAndHighBytes() {
        #expect(PHPStrings.urlDecode(Array("%00%ff".utf8)) == [0x00, 0xFF])
    }

    @Test(arguments: [
        ("2", 2), ("abc", 0), ("", 0), ("0", 0), (" 12", 12), ("\n\t12", 12), ("12abc", 12),
        ("-5", -5), ("+7", 7), ("1e3", 1000), ("2.9", 2), (".5", 0), ("99999999999999999999", Int64.max),
        ("-99999999999999999999", Int64.min), ("0x1A", 0), ("1e", 1), ("--1", 0),
    ] as [(String, Int64)])
    func intCastMatchesPHP8(input: String, expected: Int64) {
        #expect(PHPStrings.intCast(Array(input.utf8)) == expected)
    }
}

struct PHPJSONTests {
    private func encoded(_ bytes: [UInt8]) -> String {
        var writer = PHPJSONWriter()
        writer.string(bytes)
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    @Test func escapesLikeJSONEncode() {
        // GOLDEN.md: titles come back with `/` as `\/` and non-ASCII as \u escapes.
        #expect(encoded(Array("It's \"cheese\" \\o/ '); DROP TABLE photos;--".utf8))
                == #""It's \"cheese\" \\o\/ '); DROP TABLE photos;--""#)
        #expect(encoded(Array("Café ☕ 🌅".utf8)) == #""Caf\u00e9 \u2615 \ud83c\udf05""#)
    }

    @Test func controlCharactersUseShortOrUnicodeEscapes() {
        #expect(encoded([0x08, 0x0C, 0x0A, 0x0D, 0x09, 0x00, 0x1F, 0x7F]) == #""\b\f\n\r\t\u0000\u001f"# + "\u{7F}\"")
    }

    @Test func everyKindOfInputWritesTheSame() {
        // Plain runs copied whole, escapes and non-ASCII between them, and an
        // invalid byte after a long valid run still voids the whole value.
        let text = "https://h/p/12 \"é\" \\ ☕" + String(repeating: "a", count: 300) + "🌅/"
        let expected = #""https:\/\/h\/p\/12 \"\u00e9\" \\ \u2615"# + String(repeating: "a", count: 300) + #"\ud83c\udf05\/""#
        #expect(encoded(Array(text.utf8)) == expected)
        var fromString = PHPJSONWriter()
        fromString.string(text)
        #expect(String(decoding: fromString.bytes, as: UTF8.self) == expected)
        var fromNonContiguous = PHPJSONWriter()
        fromNonContiguous.string(text.utf8.lazy.map { $0 })
        #expect(String(decoding: fromNonContiguous.bytes, as: UTF8.self) == expected)
        #expect(encoded(Array(text.utf8) + [0x80]) == "null")
    }

    @Test func invalidUTF8BecomesNull() {
        // A title cut inside a character by the 100-byte latin1 column.
        #expect(encoded(Array(repeating: UInt8(ascii: "x"), count: 99) + [0xC3]) == "null")
        #expect(encoded([0xFF]) == "null")
        #expect(encoded([0xED, 0xA0, 0x80]) == "null") // an encoded surrogate
    }

    @Test func nullableStringWritesNull() {
        var writer = PHPJSONWriter()
        writer.nullableString(nil)
        writer.raw(",")
        writer.nullableString([])
        #expect(writer.bytes == Array(#"null,"""#.utf8))
    }
}

struct URLEncodedFormTests {
    /// PHP registers a field under its name up to a NUL (a C string).
    @Test func aNameEndsAtANUL() {
        let form = URLEncodedForm.parse(Array("command%00x=login&user%00name[]=a".utf8))
        #expect(form.field("command") == Array("login".utf8))
        #expect(form.field("user") == Array("a".utf8) && form.arrayNames.isEmpty, "the bracket is past the NUL: no array")
    }

    @Test func parsesLikePHP() {
        let form = URLEncodedForm.parse(Array("command=stream&IdPhoto=2&title=a+b%2B&flag&=skipped&&x=1&x=2".utf8))
        #expect(form.field("command") == Array("stream".utf8))
        #expect(form.field("IdPhoto") == Array("2".utf8))
        #expect(form.field("title") == Array("a b+".utf8))
        #expect(form.field("flag") == [])
        #expect(form.field("x") == Array("2".utf8)) // the last one wins
        #expect(form.fields.count == 5)
    }

    @Test func arrayNamesAndPHPNameMangling() {
        let form = URLEncodedForm.parse(Array("command[]=login&my.name=a&my+field=b".utf8))
        #expect(form.field("command") == nil)
        #expect(form.field("my_name") == Array("a".utf8))
        #expect(form.field("my_field") == Array("b".utf8))
        // Rails' nested names (the Mastodon API's `home[last_read_id]`, `poll[options][]`) are kept whole too.
        let nested = URLEncodedForm.parse(Array("home[last_read_id]=7&poll[options][]=a&poll[options][]=b&id[]=3".utf8))
        #expect(nested.field("home") == nil && nested.field("home[last_read_id]") == nil, "PHP's arrays, as before")
        #expect(nested.nestedFields == ["home[last_read_id]": Array("7".utf8)])
        #expect(nested.arrayValues["poll[options]"] == [Array("a".utf8), Array("b".utf8)])
        #expect(nested.arrayValues["id"] == [Array("3".utf8)])
    }
}

struct CookiesTests {
    @Test func firstOfARepeatedNameWinsAndValuesAreDecoded() {
        let cookies = Cookies.parse("a=1; PHPSESSID=abc%2Cdef ;PHPSESSID=second; empty=; noequals")
        #expect(cookies["PHPSESSID"] == Array("abc,def".utf8))
        #expect(cookies["a"] == Array("1".utf8))
        #expect(cookies["empty"] == [])
        #expect(cookies["noequals"] == nil)
        #expect(Cookies.parse(nil).isEmpty)
    }

    @Test func severalDifferentSessionCookiesMeanNoSession() {
        #expect(Cookies.sessionID("a=1; PHPSESSID=abc") == Array("abc".utf8))
        #expect(Cookies.sessionID("PHPSESSID=abc; PHPSESSID=abc") == Array("abc".utf8))
        #expect(Cookies.sessionID("PHPSESSID=abc; PHPSESSID=def") == nil)
        #expect(Cookies.sessionID("other=abc") == nil)
        #expect(Cookies.sessionID(nil) == nil)
    }
}
