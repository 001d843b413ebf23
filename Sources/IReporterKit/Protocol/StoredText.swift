/// The text of a column as the app stored it: the latin1 columns hold the
/// bytes the phone sent, UTF-8 in practice; bytes that are not valid UTF-8
/// are read as Latin-1 (what a latin1 client would have meant).
enum StoredText {
    static func scalars(_ bytes: [UInt8]) -> [Unicode.Scalar] {
        if String(validatingUTF8Bytes: bytes) != nil { return Array(String(decoding: bytes, as: UTF8.self).unicodeScalars) }
        return bytes.map { Unicode.Scalar($0) }
    }
}
