extension String {
    /// The text a C function wrote into `buffer`: up to its first NUL (all
    /// of it without one), as UTF-8.
    init(cBuffer buffer: [CChar]) {
        self.init(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
