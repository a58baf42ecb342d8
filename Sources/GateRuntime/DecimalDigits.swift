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

extension Collection<UInt8> {
    /// The bytes in lower-case hex, two digits a byte: the one hex writer of digests,
    /// HMAC key texts and secrets.
    package var lowercaseHex: String {
        func digit(_ value: UInt8) -> UInt8 { value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10 }
        return String(unsafeUninitializedCapacity: count * 2) { hex in
            for (index, byte) in enumerated() {
                hex[2 * index] = digit(byte >> 4)
                hex[2 * index + 1] = digit(byte & 0xF)
            }
            return count * 2
        }
    }
}

extension UInt8 {
    /// The value of a lower-case hex digit, as `lowercaseHex` writes them; nil for any other byte.
    package var lowercaseHexValue: UInt8? {
        switch self {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): self - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): self - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
