/// What a new username must be, so that no name hides text or passes for
/// another one (docs/SECURITY.md). Only `register` applies them: the names
/// the PHP version stored keep logging in as they are, compared by the
/// column's collation.
enum UsernameRules {
    enum Violation: Error {
        case notUTF8
        /// A control, format (bidi override, zero width), invisible, blank
        /// look-alike (U+2800), private-use or unassigned character
        /// (`TextRules`, kind `.name`).
        case invisible
        /// White space first or last (a name looks the same without it).
        case spaceAtAnEnd
        /// An `@`, or a character drawn like one (＠): Mastodon apps read
        /// `name@host` as someone on another server, whom the name would
        /// pass for.
        case atSign
    }

    /// The name to store: its NFC form (the stdlib's normalisation, which
    /// `String` comparison uses), once it follows the rules.
    static func checked(_ name: [UInt8]) throws(Violation) -> [UInt8] {
        do {
            _ = try TextRules.checked(name, as: .name)
        } catch {
            switch error {
            case .notUTF8: throw .notUTF8
            case .control, .invisible, .tooManyLines: throw .invisible
            case .blank: throw .spaceAtAnEnd // only white space: it is at both ends
            }
        }
        let scalars = String(decoding: name, as: UTF8.self).unicodeScalars
        if let first = scalars.first, let last = scalars.last,
           TextPropertyTable.classes(of: first).contains(.whiteSpace)
            || TextPropertyTable.classes(of: last).contains(.whiteSpace) {
            throw .spaceAtAnEnd
        }
        if skeleton(of: name).contains(UInt8(ascii: "@")) { throw .atSign }
        return composed(name)
    }

    /// A name in its composed form (NFC), as `register` stores it; bytes
    /// that are not UTF-8 as they are.
    static func composed(_ name: [UInt8]) -> [UInt8] {
        String(validating: name, as: UTF8.self).map { $0._nfcCodeUnits } ?? name
    }

    /// A name's look-alike skeleton (Unicode TR 39's idea, on our own table:
    /// `ConfusableTable`): each character replaced by the one it is drawn
    /// like, then NFC, ASCII letters lower-cased (the column's collation
    /// ignores case), white space as single spaces and none at the ends.
    /// Two names with one skeleton read the same to a person.
    static func skeleton(of name: [UInt8]) -> [UInt8] {
        var mapped = String.UnicodeScalarView()
        for scalar in String(decoding: String(decoding: name, as: UTF8.self)._nfcCodeUnits, as: UTF8.self).unicodeScalars {
            if let prototype = ConfusableTable.prototypes[scalar.value] {
                mapped.append(contentsOf: prototype)
            } else {
                mapped.append(scalar.properties.isWhitespace ? " " : scalar)
            }
        }
        var skeleton: [UInt8] = []
        for byte in String(mapped)._nfcCodeUnits where !(byte == 0x20 && (skeleton.last ?? 0x20) == 0x20) {
            skeleton.append((0x41...0x5A).contains(byte) ? byte + 0x20 : byte)
        }
        if skeleton.last == 0x20 { skeleton.removeLast() }
        return skeleton
    }

    /// The first of `names` that reads the same as `name` (same skeleton).
    static func lookalike(of name: [UInt8], among names: [[UInt8]]) -> [UInt8]? {
        let target = skeleton(of: name)
        return names.first { skeleton(of: $0) == target }
    }
}
