import Testing
@testable import IReporterKit

/// Stored text that is not UTF-8, read as its writer meant it.
struct StoredTextTests {
    @Test func utf8IsItself() {
        #expect(StoredText.text(Array("Café ☕".utf8)) == "Café ☕")
    }

    /// A title the PHP era's MySQL cut to its column inside a character.
    @Test func utf8CutInsideItsLastCharacterLosesThatCharacter() {
        for cut in [Array("Crème ☕".utf8).dropLast(1), Array("Crème ☕".utf8).dropLast(2), Array("Crème é".utf8).dropLast(1),
                    Array("Crème 😀".utf8).dropLast(3)] {
            #expect(StoredText.text(Array(cut)) == "Crème ", "\(Array(cut))")
        }
    }

    /// A latin1 client's (or MariaDB's conversion): one byte a character.
    @Test func anythingElseIsLatin1() {
        #expect(StoredText.text([0x63, 0x61, 0x66, 0xE9]) == "café", "ASCII before the byte: no sign of UTF-8")
        #expect(StoredText.text([0x63, 0xE9, 0x20, 0x63, 0xE8]) == "cé cè")
        #expect(StoredText.cutShort([0x61, 0xC3, 0xA9, 0x80]) == nil, "a stray continuation byte is no cut")
    }
}
