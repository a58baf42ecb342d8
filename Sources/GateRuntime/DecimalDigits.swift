extension [UInt8] {
    /// Appends `value` in decimal ASCII digits, most significant first, in place: the
    /// hot path writes numbers into reused buffers, and reversing a slice of one made
    /// a copy (an allocation) each time.
    package mutating func appendDecimal(_ value: UInt64) {
        var divisor: UInt64 = 1
        while divisor <= value / 10 { divisor *= 10 }
        var rest = value
        while divisor > 0 {
            append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }
}
