extension Character {
    /// 0 to 9 alone: `isNumber` is true of other scripts' digits and of
    /// fractions too.
    var isASCIIDigit: Bool { isASCII && isNumber }
}
