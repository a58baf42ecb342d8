/// Redis Cluster's key-to-slot function: CRC16-XMODEM of the key (or of its hash
/// tag, the part between the first `{` and the next `}` when not empty) modulo 16384.
public enum ClusterSlot {
    public static let count = 16_384

    /// The slot of `key`.
    public static func of<Bytes: Collection<UInt8>>(_ key: Bytes) -> Int {
        let bytes = Array(key)
        if let open = bytes.firstIndex(of: UInt8(ascii: "{")),
           let close = bytes[(open + 1)...].firstIndex(of: UInt8(ascii: "}")), close > open + 1 {
            return Int(crc16(bytes[(open + 1)..<close]) & 0x3FFF)
        }
        return Int(crc16(bytes[...]) & 0x3FFF)
    }

    public static func of(_ key: String) -> Int { of(key.utf8) }

    /// CRC16-CCITT (XMODEM): polynomial 0x1021, initial value 0.
    static func crc16(_ bytes: ArraySlice<UInt8>) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc ^= UInt16(byte) << 8
            for _ in 0..<8 {
                crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1
            }
        }
        return crc
    }
}
