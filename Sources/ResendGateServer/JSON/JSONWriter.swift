import GateRuntime

/// Writes JSON into a byte buffer reused between requests: no Foundation encoder on the hot path.
public struct JSONWriter {
    public private(set) var bytes: [UInt8]
    private var needsComma = false
    /// The writer's bytes as a string (for the command line and tests).
    public var string: String { String(decoding: bytes, as: UTF8.self) }

    public init(reservingCapacity capacity: Int = 512) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Empties the buffer, keeping its storage.
    public mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
        needsComma = false
    }

    public mutating func beginObject() { open(UInt8(ascii: "{")) }
    public mutating func endObject() { close(UInt8(ascii: "}")) }
    public mutating func beginArray() { open(UInt8(ascii: "[")) }
    public mutating func endArray() { close(UInt8(ascii: "]")) }

    private mutating func open(_ bracket: UInt8) {
        separate()
        bytes.append(bracket)
        needsComma = false
    }

    private mutating func close(_ bracket: UInt8) {
        bytes.append(bracket)
        needsComma = true
    }

    /// Writes `"name":` inside an object.
    public mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: "\":".utf8)
        needsComma = false
    }

    public mutating func value(_ text: String) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        // Most values (numbers, purposes, tokens, times, reasons) need no escape: copied whole.
        let copied = text.utf8.withContiguousStorageIfAvailable { utf8 in
            let plain = utf8.allSatisfy { $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") && $0 != 0x7F }
            if plain { bytes.append(contentsOf: utf8) }
            return plain
        }
        if copied == true { return bytes.append(UInt8(ascii: "\"")) }
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), byte])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20, 0x7F: bytes.append(contentsOf: "\\u00\(CollectionOfOne(byte).lowercaseHex)".utf8)
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    public mutating func value(_ number: Int64) {
        separate()
        if number < 0 { bytes.append(UInt8(ascii: "-")) }
        bytes.appendDecimal(number.magnitude)
    }

    public mutating func value(_ flag: Bool) {
        separate()
        bytes.append(contentsOf: (flag ? "true" : "false").utf8)
    }

    /// A non-negative fraction to four decimals: `0.05`, `0.8333`, `1`.
    public mutating func value(fraction: Double) {
        separate()
        let tenThousandths = fraction.isFinite && fraction > 0 ? Int64((fraction * 10_000).rounded()) : 0
        bytes.appendDecimal(UInt64(tenThousandths / 10_000))
        var rest = tenThousandths % 10_000
        if rest > 0 { bytes.append(UInt8(ascii: ".")) }
        // The four decimals up to the last that is not 0.
        var divisor: Int64 = 1000
        while rest > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(rest / divisor))
            rest %= divisor
            divisor /= 10
        }
    }

    public mutating func null() {
        separate()
        bytes.append(contentsOf: "null".utf8)
    }

    /// Writes an RFC 3339 UTC timestamp with milliseconds, as a string.
    public mutating func timestamp(millisecondsSince1970 milliseconds: Int64) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        RFC3339.append(milliseconds, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    public mutating func field(_ name: StaticString, _ text: String) { key(name); value(text) }
    public mutating func field(_ name: StaticString, _ number: Int64) { key(name); value(number) }
    public mutating func field(_ name: StaticString, _ flag: Bool) { key(name); value(flag) }

    /// The comma before a value or key, if needed; the next one needs one unless a key or bracket says not.
    private mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        needsComma = true
    }
}
