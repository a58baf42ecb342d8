/// The arguments of one command, written into a buffer that the connection
/// reuses, so that building a command allocates nothing once warmed up.
///
/// Each argument is sent with its length (a bulk string of Redis's protocol), so no
/// argument can ever be read as part of another command.
public struct RedisArguments: ~Copyable {
    var bytes: [UInt8] = []
    var ends: [Int] = []

    init() {
        bytes.reserveCapacity(256)
        ends.reserveCapacity(16)
    }

    mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
    }

    /// Appends one argument.
    public mutating func append(_ text: String) {
        bytes.append(contentsOf: text.utf8)
        ends.append(bytes.count)
    }

    /// Appends the parts as one argument (a key built from a prefix and a name)
    /// without making a string of them first.
    public mutating func append(concatenating first: String, _ second: String, _ third: String, _ fourth: String = "") {
        bytes.append(contentsOf: first.utf8)
        bytes.append(contentsOf: second.utf8)
        bytes.append(contentsOf: third.utf8)
        bytes.append(contentsOf: fourth.utf8)
        ends.append(bytes.count)
    }

    /// Appends one argument in decimal.
    public mutating func append(_ number: Int) {
        if number < 0 { bytes.append(UInt8(ascii: "-")) }
        bytes.appendDecimal(UInt64(number.magnitude))
        ends.append(bytes.count)
    }

    var count: Int { ends.count }

    /// The command in Redis's protocol (an array of bulk strings), written into `out`,
    /// which is emptied first: hiredis takes it as is, where formatting an argv itself
    /// cost a printf-like pass per argument.
    func writeRESP(into out: inout [UInt8]) {
        out.removeAll(keepingCapacity: true)
        out.append(UInt8(ascii: "*"))
        out.appendDecimal(UInt64(ends.count))
        out.append(13); out.append(10)
        bytes.withUnsafeBufferPointer { all in
            var start = 0
            for end in ends {
                out.append(UInt8(ascii: "$"))
                out.appendDecimal(UInt64(end - start))
                out.append(13); out.append(10)
                out.append(contentsOf: UnsafeBufferPointer(rebasing: all[start..<end]))
                out.append(13); out.append(10)
                start = end
            }
        }
    }
}

extension RedisArguments {
    /// Appends `prefix:{purpose:number}:suffix`, a key of one number (`number` is the
    /// E.164 text or its HMAC): the hash tag keeps a number's keys in one cluster slot.
    mutating func appendNumberKey(prefix: String, purpose: Purpose, number: String, suffix: String) {
        bytes.append(contentsOf: prefix.utf8)
        bytes.append(contentsOf: ":{".utf8)
        bytes.append(contentsOf: purpose.name.utf8)
        bytes.append(UInt8(ascii: ":"))
        bytes.append(contentsOf: number.utf8)
        bytes.append(contentsOf: "}:".utf8)
        bytes.append(contentsOf: suffix.utf8)
        ends.append(bytes.count)
    }
}
