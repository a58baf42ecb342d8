import GateRuntime
/// The arguments of one command, written into a buffer that the connection
/// reuses, so that building a command allocates nothing once warmed up.
///
/// Each argument is sent with its length (a bulk string of Redis's protocol), so no
/// argument can ever be read as part of another command.
public struct RedisArguments: ~Copyable {
    /// Every argument's bytes, one after another (`ends` says where each ends).
    package private(set) var bytes: [UInt8] = []
    var ends: [Int] = []
    /// Redis's clock as the connection writing the command reckons it (`appendRedisNow`).
    var redisNowMilliseconds: Int64?

    package init() {
        bytes.reserveCapacity(256)
        ends.reserveCapacity(16)
    }

    mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
        redisNowMilliseconds = nil
    }

    /// Appends one argument.
    public mutating func append(_ text: String) {
        bytes.append(contentsOf: text.utf8)
        ends.append(bytes.count)
    }

    /// Appends one argument in decimal.
    public mutating func append(_ number: Int) {
        if number < 0 { bytes.append(UInt8(ascii: "-")) }
        bytes.appendDecimal(UInt64(number.magnitude))
        ends.append(bytes.count)
    }

    /// Appends each of `arguments` in order, as the command is written:
    /// `args.append("ZADD", key, score, member)`.
    @inlinable
    public mutating func append<each Argument: RedisArgument>(_ arguments: repeat each Argument) {
        repeat (each arguments).append(to: &self)
    }

    /// Appends Redis's clock now in ms since 1970, as the connection that carries the
    /// script call reckons it (a `TIME` reading carried forward, see `RedisConnection`), or
    /// an empty argument while it has none: the script then asks `TIME` itself. On a
    /// cluster the reckoning is that of the node the call goes to. Script calls only
    /// (`evaluate`): a plain command gets the empty argument.
    public mutating func appendRedisNow() {
        if let now = redisNowMilliseconds { append(Int(now)) } else { append("") }
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
    /// Rewrites `EVALSHA sha N key1 key2 … keyN arg…` as `EVALSHA sha 1 key1 N-1 key2 …
    /// keyN arg…`: the call a Redis Cluster client sends after `ASK` to the script's
    /// variant that takes its other keys from ARGV (`RedisClusterClient.askedVariant`).
    /// A command without keys is left as it is.
    mutating func nameFirstKeyOnly() {
        guard ends.count >= 4, let count = Int(String(decoding: bytes[ends[1]..<ends[2]], as: UTF8.self)), count >= 1 else { return }
        var rewritten = Array(bytes[..<ends[1]])
        rewritten.append(UInt8(ascii: "1"))
        var newEnds = [ends[0], ends[1], rewritten.count]
        rewritten += bytes[ends[2]..<ends[3]]
        newEnds.append(rewritten.count)
        rewritten.appendDecimal(UInt64(count - 1))
        newEnds.append(rewritten.count)
        let shift = rewritten.count - ends[3]
        rewritten += bytes[ends[3]...]
        newEnds += ends[4...].map { $0 + shift }
        bytes = rewritten
        ends = newEnds
    }

    /// Appends `text` to the argument being written (a key spelled part by part, see
    /// `GateKeys`); `endArgument()` ends it.
    package mutating func appendPart(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    /// Appends `value` to the argument being written as exactly `digits` lower-case hex
    /// digits, leading zeros included (a fixed-width field no String is made for).
    package mutating func appendHexPart(_ value: UInt64, digits: Int) {
        for shift in stride(from: (digits - 1) * 4, through: 0, by: -4) {
            let nibble = UInt8((value >> UInt64(shift)) & 0xF)
            bytes.append(nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10)
        }
    }

    /// Ends the argument `appendPart(_:)` wrote.
    package mutating func endArgument() {
        ends.append(bytes.count)
    }
}

/// A value a command takes as one argument: text, or a whole number in decimal.
public protocol RedisArgument {
    func append(to arguments: inout RedisArguments)
}

extension String: RedisArgument {
    public func append(to arguments: inout RedisArguments) { arguments.append(self) }
}

extension Int: RedisArgument {
    public func append(to arguments: inout RedisArguments) { arguments.append(self) }
}
