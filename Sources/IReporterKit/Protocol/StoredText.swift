/// The text of a column as the app stored it: the latin1 columns hold the
/// bytes the phone sent, UTF-8 in practice. Two kinds are not valid UTF-8:
/// UTF-8 cut inside its last character (the PHP era's MySQL cut a title to
/// the column's 100 bytes), read without that partial character when the
/// rest shows it is UTF-8 (a character of several bytes); and anything else
/// (a latin1 client's, or text MariaDB converted into the columns: `café`
/// ends in the one byte E9), read as Latin-1, what such a client meant.
enum StoredText {
    static func text(_ bytes: [UInt8]) -> String {
        if let text = String(validating: bytes, as: UTF8.self) { return text }
        if let cut = cutShort(bytes), cut.utf8.contains(where: { $0 >= 0x80 }) { return cut }
        return String(String.UnicodeScalarView(bytes.map { Unicode.Scalar($0) }))
    }

    static func scalars(_ bytes: [UInt8]) -> [Unicode.Scalar] { Array(text(bytes).unicodeScalars) }

    /// UTF-8 whose last character lacks its last bytes: the text before it.
    static func cutShort(_ bytes: [UInt8]) -> String? {
        // The start of the last character, at most 3 bytes from the end.
        guard let lead = bytes.indices.suffix(3).last(where: { bytes[$0] & 0xC0 != 0x80 }), (0xC2...0xF4).contains(bytes[lead])
        else { return nil }
        let needed = bytes[lead] >= 0xF0 ? 4 : bytes[lead] >= 0xE0 ? 3 : 2
        guard bytes.count - lead < needed else { return nil }
        return String(validating: bytes[..<lead], as: UTF8.self)
    }
}
