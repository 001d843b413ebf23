/// latin1_swedish_ci, the collation of the original `login.username`, for
/// the in-memory store: one weight per byte (a letter in either case and
/// its accented forms share one: `C\xC3R\xD5L` is `carol`), trailing spaces
/// not counted (PAD SPACE). `weights(of:)` is what `MariaDBUserStore.accountKey`
/// gets from MariaDB's `WEIGHT_STRING` (checked for all 256 bytes against
/// the real server by SecurityIntegrationTests).
enum Latin1SwedishCollation {
    /// The weights of the names equal exactly when the column compares them equal.
    static func weights(of name: [UInt8]) -> [UInt8] {
        var end = name.endIndex
        while end > name.startIndex && name[end - 1] == 0x20 { end -= 1 }
        return name[..<end].map { table[Int($0)] }
    }

    /// Weights of À…ß (0xC0-0xDF); à…ÿ (0xE0-0xFF) weigh the same, except
    /// ÷ and ÿ, which weigh themselves.
    private static let accented: [UInt8] = [
        0x41, 0x41, 0x41, 0x41, 0x5C, 0x5B, 0x5C, 0x43, 0x45, 0x45, 0x45, 0x45, 0x49, 0x49, 0x49, 0x49,
        0x44, 0x4E, 0x4F, 0x4F, 0x4F, 0x4F, 0x5D, 0xD7, 0xD8, 0x55, 0x55, 0x55, 0x59, 0x59, 0xDE, 0xDF,
    ]

    private static let table: [UInt8] = (0...255).map { (byte: Int) -> UInt8 in
        switch byte {
        case 0x61...0x7A: UInt8(byte - 0x20)
        case 0xC0...0xDF: accented[byte - 0xC0]
        case 0xE0...0xFF where byte != 0xF7 && byte != 0xFF: accented[byte - 0xE0]
        default: UInt8(byte)
        }
    }
}
