/// Rules for the text people type (usernames, titles).
enum TextRules {
    static func isControl(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x7F }

    /// Cut to `maxBytes` without splitting a UTF-8 character (text that is
    /// not UTF-8 is cut at the byte).
    static func fitting(_ text: [UInt8], maxBytes: Int) -> [UInt8] {
        guard text.count > maxBytes else { return text }
        var end = maxBytes
        if String(validatingUTF8Bytes: text) != nil {
            while end > 0 && text[end] & 0xC0 == 0x80 { end -= 1 }
        }
        return Array(text[..<end])
    }
}

extension String {
    init?(validatingUTF8Bytes bytes: [UInt8]) {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: self = ""; return
            case .error: return nil
            }
        }
    }
}
