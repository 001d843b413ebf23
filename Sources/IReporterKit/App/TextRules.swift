/// Rules for the text people type and everyone sees (titles; usernames
/// have stricter ones: `UsernameRules`).
enum TextRules {
    enum Violation: Error {
        case notUTF8
        /// A control character (C0, C1, DEL), a line or paragraph separator,
        /// or a bidi control that reorders what follows it.
        case control
    }

    /// Valid UTF-8 without control characters, line breaks or bidi
    /// controls. (Zero-width joiners stay: emoji sequences are made of them.)
    static func check(_ text: [UInt8]) throws(Violation) {
        guard let string = String(validatingUTF8Bytes: text) else { throw .notUTF8 }
        if string.unicodeScalars.contains(where: isControl) { throw .control }
    }

    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .lineSeparator, .paragraphSeparator: true
        default: scalar.properties.isBidiControl
        }
    }

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
            case .emptyInput: self = String(decoding: bytes, as: UTF8.self); return
            case .error: return nil
            }
        }
    }
}
