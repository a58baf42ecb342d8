@testable import RedisClient
@testable import ResendGate
import Testing

@Suite("RedisArguments: commands in Redis's protocol")
struct RedisArgumentsTests {
    private func resp(_ build: (inout RedisArguments) -> Void) -> String {
        var arguments = RedisArguments()
        build(&arguments)
        var out: [UInt8] = [1, 2, 3]  // emptied first
        arguments.writeRESP(into: &out)
        return String(decoding: out, as: UTF8.self)
    }

    @Test func everyArgumentIsABulkStringWithItsLength() {
        let text = resp { args in
            args.append("SET")
            args.append("rg:{default:+8613800138000}:cooldown")
            args.append("")
            args.append(3_600_000)
            args.append(-5)
            args.append(0)
        }
        #expect(text == "*6\r\n$3\r\nSET\r\n$36\r\nrg:{default:+8613800138000}:cooldown\r\n$0\r\n\r\n"
            + "$7\r\n3600000\r\n$2\r\n-5\r\n$1\r\n0\r\n")
    }

    /// Lengths count bytes, and CR LF inside an argument stays inside it.
    @Test func bytesNotCharactersAndNoInjection() {
        let text = resp { args in
            args.append("é\r\nFLUSHALL")
            args.append(String(repeating: "x", count: 100))
        }
        #expect(text == "*2\r\n$12\r\né\r\nFLUSHALL\r\n$100\r\n" + String(repeating: "x", count: 100) + "\r\n")
    }

    @Test func noArguments() {
        #expect(resp { _ in } == "*0\r\n")
    }
}

/// Which policies the plain-cooldown commands (SET NX PX GET, PTTL) may decide.
@Suite("The choice of the plain-cooldown commands")
struct CooldownArgumentsTests {
    @Test func onlyASingleCooldownThatCountsNothingIsPlain() {
        #expect(CompiledPolicy(Policy()).plainCooldownMilliseconds == 60_000)
        #expect(CompiledPolicy(Policy(ladder: [.seconds(90)], ipMaxSends: 5)).plainCooldownMilliseconds == 90_000)
        #expect(CompiledPolicy(Policy(maxSends: 10)).plainCooldownMilliseconds == nil)
        #expect(CompiledPolicy(Policy(ladder: [.seconds(60), .seconds(120)])).plainCooldownMilliseconds == nil)
    }
}
